(() => {
  const t = document.getElementById('source'), ed = document.getElementById('editor');
  const hl = document.getElementById('highlight'), gutter = document.getElementById('gutter');
  const out = document.getElementById('diagnostics'), pop = document.getElementById('complete');
  const csrf = document.querySelector('input[name=csrf]').value, base = t.dataset.base;
  let timer = null, problems = new Map(), tools = [], steps = [], shown = [], pick = 0;
  ed.classList.add('live');
  const esc = s => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const span = (c, s) => '<span class="' + c + '">' + esc(s) + '</span>';
  // One line of YAML: a key, then strings, refs ($ paths and `ref`), a comment.
  const line = l => {
    let q = null, cut = l.length;
    for (let i = 0; i < l.length; i++) {
      const c = l[i];
      if (q) { if (c === q) q = null; } else if (c === '"' || c === "'") q = c;
      else if (c === '#' && (i === 0 || /\s/.test(l[i - 1]))) { cut = i; break; }
    }
    let code = l.slice(0, cut), html = '';
    const key = code.match(/^(\s*(?:-\s+)?)([\w.$-]+)(\s*:)(?=\s|$)/);
    if (key) { html = esc(key[1]) + span(key[2] === 'ref' ? 'r' : 'k', key[2]) + esc(key[3]); code = code.slice(key[0].length); }
    const tok = /("(?:[^"\\]|\\.)*"?|'(?:[^']|'')*'?)|\b(ref)(?=\s*:)|(\$[^\s,}\]]*)/g;
    let at = 0, m;
    while ((m = tok.exec(code))) {
      html += esc(code.slice(at, m.index)) + span(m[1] ? 's' : 'r', m[0]);
      at = m.index + m[0].length;
    }
    html += esc(code.slice(at));
    return html + (cut < l.length ? span('c', l.slice(cut)) : '');
  };
  const render = () => {
    const lines = t.value.split('\n');
    hl.innerHTML = lines.map(l => '<span class="l">' + (line(l) || ' ') + '</span>').join('');
    t.style.height = 'auto';
    t.style.height = t.scrollHeight + 'px';
    const rows = hl.children;
    gutter.replaceChildren(...lines.map((_, i) => {
      const s = document.createElement('span'), p = problems.get(i + 1);
      s.textContent = i + 1;
      s.style.height = rows[i].getBoundingClientRect().height + 'px';
      if (p) { s.className = 'bad'; s.title = p.join('\n'); s.setAttribute('aria-label', 'line ' + (i + 1) + ': ' + p.join('; ')); }
      return s;
    }));
  };
  const check = async () => {
    const r = await fetch('/ui/validate' + (base ? '?base=' + encodeURIComponent(base) : ''),
      {method: 'POST', headers: {'content-type': 'text/plain', 'x-dragnet-csrf': csrf}, body: t.value});
    if (!r.ok) { out.textContent = 'could not check (' + r.status + ')'; return; }
    const v = await r.json();
    problems = new Map();
    for (const d of v.diagnostics || []) problems.set(d.line, [...(problems.get(d.line) || []), d.message]);
    if (v.valid) { tools = v.tools || tools; steps = v.steps || steps; }
    out.replaceChildren(...(v.diagnostics || []).map(d => {
      const li = document.createElement('li');
      li.textContent = d.line + ':' + d.column + ': ' + d.message;
      return li;
    }));
    out.dataset.valid = v.valid;
    document.getElementById('state').textContent = v.valid ? 'valid' : 'not valid';
    render();
  };
  // Completion: tools after `tool:`, step ids after `needs:` or `$.steps.`.
  const word = () => {
    const before = t.value.slice(0, t.selectionStart), ln = before.slice(before.lastIndexOf('\n') + 1);
    const w = ln.match(/[\w.$-]*$/)[0], lead = ln.slice(0, ln.length - w.length);
    if (/\btool:\s*["']?$/.test(lead)) return {w, from: tools};
    if (w.startsWith('$.steps.')) return {w: w.slice(8), from: steps};
    if (/\bneeds:\s*\[?(?:[\w-]+,\s*)*$/.test(lead)) return {w, from: steps};
    return null;
  };
  const close = () => { pop.hidden = true; shown = []; t.removeAttribute('aria-activedescendant'); };
  const choose = i => { pick = i; [...pop.children].forEach((li, k) => li.setAttribute('aria-selected', k === i)); t.setAttribute('aria-activedescendant', 'complete-' + i); };
  const suggest = () => {
    const c = word();
    shown = c && c.w.length > 0 ? c.from.filter(x => x.startsWith(c.w) && x !== c.w).slice(0, 8) : [];
    if (!shown.length) return close();
    pop.replaceChildren(...shown.map((x, i) => {
      const li = document.createElement('li');
      li.id = 'complete-' + i; li.setAttribute('role', 'option'); li.textContent = x;
      li.addEventListener('mousedown', e => { e.preventDefault(); accept(i); });
      return li;
    }));
    pop.hidden = false; choose(0);
  };
  const accept = i => {
    const c = word(), x = shown[i];
    if (!c || x === undefined) return close();
    const at = t.selectionStart;
    t.setRangeText(x.slice(c.w.length), at, at, 'end');
    close(); t.dispatchEvent(new Event('input'));
  };
  t.addEventListener('keydown', e => {
    if (pop.hidden) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') { e.preventDefault(); choose((pick + (e.key === 'ArrowDown' ? 1 : shown.length - 1)) % shown.length); }
    else if (e.key === 'Enter' || e.key === 'Tab') { e.preventDefault(); accept(pick); }
    else if (e.key === 'Escape') close();
  });
  t.addEventListener('input', () => { render(); suggest(); clearTimeout(timer); timer = setTimeout(check, 300); });
  t.addEventListener('blur', close);
  window.addEventListener('resize', render);
  render(); check();
})();
