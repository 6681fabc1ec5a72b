//! Where providers may point (`[server] upstream_hosts`, issue 21): a list
//! of patterns, and the resolver that holds every address a name resolves
//! to against them, so a name pointing into a refused range is refused too.
//!
//! Patterns, each one of:
//! - `*`: any host;
//! - `api.stripe.com`: that name exactly (case-insensitive, a final dot
//!   ignored);
//! - `*.example.com`: any name under `example.com` (not `example.com`);
//! - `10.0.0.0/8`, `fd00::/8`: any address in the range; a bare address
//!   (`192.168.1.5`, `::1`) is that address alone;
//! - any of these after `!`: refused.
//!
//! A host is admitted when an admitting pattern matches it and no refusing
//! one does (a refusal wins). A list without admitting patterns admits `*`,
//! so `["!127.0.0.0/8"]` is every host but loopback. Names are matched by
//! name patterns before resolution, and every address a name resolves to
//! by the ranges: each must be outside every refused range, and, for a name
//! no name pattern admitted, inside an admitted range.
//!
//! Whatever the list says, link-local addresses (169.254.0.0/16, fe80::/10)
//! and cloud metadata endpoints (169.254.169.254, fd00:ec2::254,
//! 100.100.100.200, metadata.google.internal…) are refused.

use std::fmt;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::Url;

/// Why a host may not be an upstream: the host and the rule that refused it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the upstream host `{host}` is refused: {rule}")]
pub struct HostRefused {
    pub host: String,
    /// The rule in words, e.g. "169.254.169.254 is a cloud metadata address".
    pub rule: String,
}

/// A pattern of `upstream_hosts` that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{pattern}` is not a host pattern: {reason} (patterns are `*`, a host name, `*.suffix`, an address or a CIDR range, each optionally after `!`)")]
pub struct PatternError {
    pub pattern: String,
    /// The pattern's place in the list, from 0.
    pub index: usize,
    pub reason: String,
}

/// An address range: `addr/len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    addr: IpAddr,
    len: u8,
}

impl Range {
    const fn v4(a: [u8; 4], len: u8) -> Range {
        Range {
            addr: IpAddr::V4(Ipv4Addr::new(a[0], a[1], a[2], a[3])),
            len,
        }
    }

    fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => prefix_eq(&net.octets(), &ip.octets(), self.len),
            (IpAddr::V6(net), IpAddr::V6(ip)) => prefix_eq(&net.octets(), &ip.octets(), self.len),
            _ => false,
        }
    }

    fn parse(text: &str) -> Result<Option<Range>, String> {
        let (addr, len) = match text.split_once('/') {
            Some((addr, len)) => (addr, Some(len)),
            None => (text, None),
        };
        let addr = addr.trim_start_matches('[').trim_end_matches(']');
        let Ok(addr) = addr.parse::<IpAddr>() else {
            return match len {
                Some(_) => Err(format!("`{addr}` before the `/` is not an IP address")),
                None => Ok(None),
            };
        };
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let len = match len {
            None => max,
            Some(len) => match len.parse::<u8>() {
                Ok(n) if n <= max => n,
                _ => return Err(format!("the prefix length must be 0 to {max}")),
            },
        };
        Ok(Some(Range { addr, len }))
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

fn prefix_eq(a: &[u8], b: &[u8], len: u8) -> bool {
    let whole = usize::from(len / 8);
    let rest = len % 8;
    if a[..whole] != b[..whole] {
        return false;
    }
    if rest == 0 {
        return true;
    }
    let mask = 0xffu8 << (8 - rest);
    a[whole] & mask == b[whole] & mask
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pattern {
    Any,
    /// A name, lower-case, without a final dot.
    Exact(String),
    /// `.example.com` for `*.example.com`.
    Suffix(String),
    Net(Range),
}

impl Pattern {
    fn parse(text: &str) -> Result<Pattern, String> {
        if text == "*" {
            return Ok(Pattern::Any);
        }
        if let Some(range) = Range::parse(text)? {
            return Ok(Pattern::Net(range));
        }
        let name = text.trim_end_matches('.').to_ascii_lowercase();
        let (suffix, bare) = match name.strip_prefix("*.") {
            Some(rest) => (true, rest.to_string()),
            None => (false, name.clone()),
        };
        let label_ok = |l: &str| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        };
        if bare.is_empty() || !bare.split('.').all(label_ok) {
            return Err(
                "a host name has letters, digits, `-` and `_` in dot-separated labels, \
                 `*` only as a whole first label, and no scheme, port or path"
                    .into(),
            );
        }
        Ok(match suffix {
            true => Pattern::Suffix(format!(".{bare}")),
            false => Pattern::Exact(bare),
        })
    }

    fn matches_name(&self, name: &str) -> bool {
        match self {
            Pattern::Any => true,
            Pattern::Exact(exact) => exact == name,
            Pattern::Suffix(suffix) => name.ends_with(suffix.as_str()),
            Pattern::Net(_) => false,
        }
    }

    fn matches_addr(&self, ip: IpAddr) -> bool {
        match self {
            Pattern::Any => true,
            Pattern::Net(range) => range.contains(ip),
            Pattern::Exact(_) | Pattern::Suffix(_) => false,
        }
    }
}

/// Addresses no upstream may be, whatever the list says, and why.
const REFUSED_RANGES: &[(Range, &str)] = &[
    (
        Range::v4([169, 254, 169, 254], 32),
        "a cloud metadata address (AWS, GCP, Azure, Oracle)",
    ),
    (
        Range::v4([100, 100, 100, 200], 32),
        "a cloud metadata address (Alibaba Cloud)",
    ),
    (
        Range {
            addr: IpAddr::V6(Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
            len: 128,
        },
        "a cloud metadata address (AWS, IPv6)",
    ),
    (
        Range::v4([169, 254, 0, 0], 16),
        "link-local (169.254.0.0/16), where cloud metadata services answer",
    ),
    (
        Range {
            addr: IpAddr::V6(Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0)),
            len: 10,
        },
        "link-local (fe80::/10)",
    ),
];

/// Names of cloud metadata services, refused whatever the list says.
const REFUSED_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
];

/// How a name was admitted, which decides what its addresses must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// A name pattern admits it: its addresses need only be outside the
    /// refused ranges.
    ByName,
    /// No name pattern does: each address must be in an admitted range.
    ByAddress,
}

/// `upstream_hosts`, parsed: what may be an upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPolicy {
    admit: Vec<Pattern>,
    refuse: Vec<Pattern>,
    /// The patterns as written, for messages.
    written: Vec<String>,
}

impl Default for HostPolicy {
    /// Every host but link-local and cloud metadata addresses.
    fn default() -> Self {
        HostPolicy {
            admit: vec![Pattern::Any],
            refuse: Vec::new(),
            written: Vec::new(),
        }
    }
}

impl HostPolicy {
    /// Parses `upstream_hosts`; the first bad pattern is the error.
    pub fn parse<S: AsRef<str>>(patterns: &[S]) -> Result<HostPolicy, PatternError> {
        let mut policy = HostPolicy {
            admit: Vec::new(),
            refuse: Vec::new(),
            written: Vec::new(),
        };
        for (index, written) in patterns.iter().enumerate() {
            let written = written.as_ref().trim();
            let (refusing, text) = match written.strip_prefix('!') {
                Some(rest) => (true, rest.trim()),
                None => (false, written),
            };
            let pattern = Pattern::parse(text).map_err(|reason| PatternError {
                pattern: written.to_string(),
                index,
                reason,
            })?;
            match refusing {
                true => policy.refuse.push(pattern),
                false => policy.admit.push(pattern),
            }
            policy.written.push(written.to_string());
        }
        if policy.admit.is_empty() {
            policy.admit.push(Pattern::Any);
        }
        Ok(policy)
    }

    /// Whether `host` (a URL's host: a name, an IPv4 address or a
    /// bracketed IPv6 one) may be an upstream as far as can be told
    /// without resolving it: how a name is admitted, or why not.
    pub fn check_host(&self, host: &str) -> Result<Admission, HostRefused> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            self.check_addr(bare, Admission::ByAddress, ip)?;
            return Ok(Admission::ByName);
        }
        let name = bare.trim_end_matches('.').to_ascii_lowercase();
        let refused = |rule: String| HostRefused {
            host: name.clone(),
            rule,
        };
        if REFUSED_NAMES.contains(&name.as_str()) {
            return Err(refused("it names a cloud metadata service".into()));
        }
        if let Some(i) = self.refuse.iter().position(|p| p.matches_name(&name)) {
            return Err(refused(self.by_refusal(i)));
        }
        if self.admit.iter().any(|p| p.matches_name(&name)) {
            return Ok(Admission::ByName);
        }
        if self.admit.iter().any(|p| matches!(p, Pattern::Net(_))) {
            return Ok(Admission::ByAddress);
        }
        Err(refused(self.not_listed()))
    }

    /// Whether `ip`, an address `host` resolved to (or `host` itself),
    /// may be connected to.
    pub fn check_addr(
        &self,
        host: &str,
        admission: Admission,
        ip: IpAddr,
    ) -> Result<(), HostRefused> {
        let ip = ip.to_canonical();
        let refused = |rule: String| HostRefused {
            host: host.to_string(),
            rule,
        };
        let shown = |rule: &str| match host.parse::<IpAddr>() {
            Ok(_) => format!("it is {rule}"),
            Err(_) => format!("it resolves to {ip}, {rule}"),
        };
        if let Some((_, why)) = REFUSED_RANGES.iter().find(|(r, _)| r.contains(ip)) {
            return Err(refused(shown(why)));
        }
        if let Some(i) = self.refuse.iter().position(|p| p.matches_addr(ip)) {
            return Err(refused(shown(&format!("in {}", self.by_refusal(i)))));
        }
        if admission == Admission::ByName || self.admit.iter().any(|p| p.matches_addr(ip)) {
            return Ok(());
        }
        Err(refused(shown(&format!("not {}", self.not_listed()))))
    }

    /// The check of a provider's `base_url` when it is pushed: its host by
    /// name (a name is not resolved here; its addresses are held to the
    /// ranges when it is called).
    pub fn check_base_url(&self, base_url: &str) -> Result<(), HostRefused> {
        match Url::parse(base_url.trim()).ok().and_then(|u| host_of(&u)) {
            Some(host) => self.check_host(&host).map(|_| ()),
            None => Ok(()),
        }
    }

    /// The check of a URL about to be sent to: its host by name, or an
    /// address host as an address (those are not resolved, so this is
    /// their only check).
    pub fn check_url(&self, url: &Url) -> Result<(), HostRefused> {
        match host_of(url) {
            Some(host) => self.check_host(&host).map(|_| ()),
            None => Ok(()),
        }
    }

    fn by_refusal(&self, i: usize) -> String {
        let written: Vec<&String> = self.written.iter().filter(|w| w.starts_with('!')).collect();
        match written.get(i) {
            Some(w) => format!("the refusal `{w}` of [server] upstream_hosts"),
            None => "a refusal of [server] upstream_hosts".into(),
        }
    }

    fn not_listed(&self) -> String {
        let admitted: Vec<String> = self
            .written
            .iter()
            .filter(|w| !w.starts_with('!'))
            .map(|w| format!("`{w}`"))
            .collect();
        format!(
            "admitted by [server] upstream_hosts ({})",
            admitted.join(", ")
        )
    }
}

impl HostPolicy {
    /// `host`'s addresses as the system resolves them, each held to the
    /// policy: a name with any refused address is refused as a whole
    /// ([`HostRefused`] as the error, or its source). What every resolver
    /// of an upstream under a policy does (this crate's HTTP client and an
    /// MCP server's).
    pub async fn resolve(
        &self,
        host: &str,
    ) -> Result<Vec<SocketAddr>, Box<dyn std::error::Error + Send + Sync>> {
        let admission = self.check_host(host)?;
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
        for addr in &addrs {
            self.check_addr(host, admission, addr.ip())?;
        }
        Ok(addrs)
    }
}

/// A URL's host as `check_host` reads it.
fn host_of(url: &Url) -> Option<String> {
    url.host_str().map(str::to_string)
}

/// The DNS resolver of an upstream under a policy: names resolved by the
/// system, every address held to the policy, a name with any refused
/// address refused as a whole (`HostRefused` as the error's source).
#[derive(Debug, Clone)]
pub(super) struct PolicyResolver {
    pub(super) policy: Arc<HostPolicy>,
}

impl Resolve for PolicyResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_string();
        let resolving: Pin<Box<dyn Future<Output = _> + Send>> = Box::pin(async move {
            let addrs = policy.resolve(&host).await?;
            Ok(Box::new(addrs.into_iter()) as Addrs)
        });
        resolving
    }
}

/// The policy's refusal behind a failed request, when that is what failed it.
pub(super) fn refusal_in(error: &(dyn std::error::Error + 'static)) -> Option<HostRefused> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if let Some(refused) = e.downcast_ref::<HostRefused>() {
            return Some(refused.clone());
        }
        cause = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(patterns: &[&str]) -> HostPolicy {
        HostPolicy::parse(patterns).unwrap()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_default_admits_everything_but_link_local_and_metadata() {
        let p = HostPolicy::default();
        for ok in [
            "api.stripe.com",
            "localhost",
            "127.0.0.1",
            "10.1.2.3",
            "[::1]",
        ] {
            assert_eq!(p.check_host(ok), Ok(Admission::ByName), "{ok}");
        }
        for refused in [
            "169.254.169.254",
            "169.254.1.1",
            "100.100.100.200",
            "[fd00:ec2::254]",
            "[fe80::1]",
            "[::ffff:169.254.169.254]",
            "metadata.google.internal",
            "Metadata.Google.Internal.",
        ] {
            assert!(p.check_host(refused).is_err(), "{refused}");
        }
        let e = p.check_host("169.254.169.254").unwrap_err();
        assert_eq!(e.host, "169.254.169.254");
        assert!(e.rule.contains("cloud metadata"), "{}", e.rule);
        // A name resolving into link-local is refused at its address.
        let e = p
            .check_addr("evil.example", Admission::ByName, ip("169.254.169.254"))
            .unwrap_err();
        assert!(e.rule.contains("resolves to 169.254.169.254"), "{}", e.rule);
        assert!(p
            .check_addr("good.example", Admission::ByName, ip("93.184.216.34"))
            .is_ok());
    }

    #[test]
    fn names_suffixes_ranges_and_refusals() {
        let p = policy(&["api.stripe.com", "*.example.com", "10.0.0.0/8"]);
        assert_eq!(p.check_host("API.stripe.com"), Ok(Admission::ByName));
        assert_eq!(p.check_host("a.b.example.com"), Ok(Admission::ByName));
        // `*.example.com` is under example.com, not example.com itself,
        // and not a name that merely ends the same way.
        assert_eq!(p.check_host("example.com"), Ok(Admission::ByAddress));
        assert_eq!(p.check_host("badexample.com"), Ok(Admission::ByAddress));
        assert!(p.check_host("10.200.0.1").is_ok());
        assert!(p.check_host("11.0.0.1").is_err());
        // A name no name pattern admits must resolve into an admitted range.
        assert!(p
            .check_addr("internal", Admission::ByAddress, ip("10.0.0.7"))
            .is_ok());
        let e = p
            .check_addr("internal", Admission::ByAddress, ip("192.168.0.7"))
            .unwrap_err();
        assert!(
            e.rule.contains("not admitted by [server] upstream_hosts"),
            "{}",
            e.rule
        );
        // Without ranges, an unlisted name is refused before resolution.
        let names = policy(&["api.stripe.com"]);
        let e = names.check_host("api.github.com").unwrap_err();
        assert!(e.rule.contains("`api.stripe.com`"), "{}", e.rule);
        assert!(names.check_base_url("https://api.github.com/v3").is_err());
        assert!(names.check_base_url("https://api.stripe.com/v1").is_ok());

        // Refusals win; a list of refusals only admits everything else.
        let p = policy(&["!127.0.0.0/8", "!*.internal.example"]);
        assert!(p.check_host("127.0.0.1").is_err());
        assert!(p.check_host("db.internal.example").is_err());
        assert_eq!(p.check_host("localhost"), Ok(Admission::ByName));
        let e = p
            .check_addr("localhost", Admission::ByName, ip("127.0.0.1"))
            .unwrap_err();
        assert!(e.rule.contains("`!127.0.0.0/8`"), "{}", e.rule);
        assert!(p
            .check_addr("localhost", Admission::ByName, ip("::1"))
            .is_ok());
        // Even `*` does not admit link-local.
        assert!(policy(&["*", "169.254.0.0/16"])
            .check_host("169.254.169.254")
            .is_err());
    }

    #[test]
    fn ranges_match_by_prefix() {
        let r = |s: &str| Range::parse(s).unwrap().unwrap();
        assert!(r("10.0.0.0/8").contains(ip("10.255.1.2")));
        assert!(!r("10.0.0.0/8").contains(ip("11.0.0.0")));
        assert!(r("192.168.4.0/22").contains(ip("192.168.7.255")));
        assert!(!r("192.168.4.0/22").contains(ip("192.168.8.0")));
        assert!(r("0.0.0.0/0").contains(ip("8.8.8.8")));
        assert!(!r("0.0.0.0/0").contains(ip("::1")));
        assert!(r("fd00::/8").contains(ip("fd12::1")));
        assert!(r("[::1]").contains(ip("::1")));
        assert!(!r("::1").contains(ip("::2")));
    }

    #[test]
    fn bad_patterns_say_which() {
        for bad in [
            "",
            "!",
            "http://x.com",
            "x.com:443",
            "a.*.com",
            "10.0.0.0/33",
            "x/8",
            "a..b",
        ] {
            let e = HostPolicy::parse(&["ok.com", bad]).unwrap_err();
            assert_eq!(e.index, 1, "{bad}");
            assert_eq!(e.pattern, bad.trim());
        }
    }
}
