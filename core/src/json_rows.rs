//! Rows this program wrote itself (projections, filter matches): one buffer
//! of JSON values back to back, with where each ends. They are valid by
//! construction (built from validated raw parts and quoted keys), so they are
//! never parsed again on the way out.

/// A list of JSON values in one buffer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rows {
    text: String,
    ends: Vec<usize>,
}

impl Rows {
    pub fn with_capacity(rows: usize, bytes: usize) -> Rows {
        Rows {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(rows),
        }
    }

    /// Appends one row written by `write`.
    pub fn push_with(&mut self, write: impl FnOnce(&mut String)) {
        write(&mut self.text);
        self.ends.push(self.text.len());
    }

    /// Appends a row that is already JSON text.
    pub fn push_text(&mut self, row: &str) {
        self.push_with(|out| out.push_str(row));
    }

    /// Makes room for `rows` more rows of `bytes` bytes in all.
    pub fn reserve(&mut self, rows: usize, bytes: usize) {
        self.text.reserve_exact(bytes);
        self.ends.reserve_exact(rows);
    }

    /// Moves the rows of `other` to the end of this list.
    pub fn append(&mut self, other: Rows) {
        if self.ends.is_empty() {
            *self = other;
            return;
        }
        let shift = self.text.len();
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.iter().map(|e| e + shift));
    }

    /// Keeps the first `n` rows.
    pub fn truncate(&mut self, n: usize) {
        if n >= self.ends.len() {
            return;
        }
        self.ends.truncate(n);
        self.text.truncate(self.ends.last().copied().unwrap_or(0));
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The bytes of every row together.
    pub fn text_len(&self) -> usize {
        self.text.len()
    }

    /// Row `i` as JSON text.
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.text.get(start..end)
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_kept_apart() {
        let mut rows = Rows::default();
        rows.push_text(r#"{"a":1}"#);
        rows.push_with(|o| o.push_str("[2]"));
        rows.push_text("null");
        assert_eq!(
            rows.iter().collect::<Vec<_>>(),
            vec![r#"{"a":1}"#, "[2]", "null"]
        );
        assert_eq!(rows.get(3), None);
        assert_eq!(rows.len(), 3);
        let mut more = Rows::default();
        more.push_text("4");
        rows.append(more);
        let mut none = Rows::default();
        none.append(rows.clone());
        assert_eq!(none.iter().last(), Some("4"));
        assert_eq!(none.len(), 4);
        none.truncate(5);
        assert_eq!(none.len(), 4);
        none.truncate(2);
        assert_eq!(none.iter().collect::<Vec<_>>(), vec![r#"{"a":1}"#, "[2]"]);
        none.push_text("5");
        assert_eq!(none.get(2), Some("5"));
        none.truncate(0);
        assert!(none.is_empty() && none.text_len() == 0);
    }
}
