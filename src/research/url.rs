//! Checking and normalising the URL of a page to research.
//!
//! [`check`] reads a URL the way a browser's `fetch` would (the WHATWG URL rules for the
//! `http` and `https` schemes), so that what it refuses is what the fetch would really reach:
//!
//! - tabs and line breaks anywhere are removed (as the browser does), other whitespace and
//!   control characters are refused;
//! - only `http:` and `https:`: `file:`, `javascript:`, `data:`, `ftp:` and the rest are
//!   refused, as is a URL without a scheme;
//! - any number of slashes or backslashes after the scheme (`http:\\host`, `http:host`) is
//!   read as the browser reads it;
//! - no credentials: any `@` in the authority (`http://user:pass@host`, `http://@host`) is
//!   refused;
//! - the host is percent-decoded, then: a host ending in a number is an IPv4 address in any
//!   of the forms a browser accepts (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`), and an
//!   invalid one is refused; `[...]` is an IPv6 address (`[::1]`, `[::ffff:127.0.0.1]`); a
//!   non-ASCII host must be given in its punycode form (`xn--…`), so that no Unicode
//!   look-alike (full-width digits, say) can hide a private address;
//! - loopback, private, link-local, shared (CGNAT), multicast, reserved and unspecified
//!   addresses, IPv4 embedded in IPv6 (mapped, compatible, NAT64, 6to4) included, and the
//!   names `localhost`, `*.localhost`, `*.local`, `*.internal` and `*.home.arpa`, are refused
//!   unless the writer allows private addresses (`researchAllowPrivate`). Host *names* are
//!   not resolved here (the worker cannot): a public name that resolves to a private address
//!   is the fetch proxy's to refuse (the dev server's proxy does).
//!
//! **Normalisation** ([`Checked::url`], also the dedup key of research notes): scheme and
//! host lower-cased, an IPv4 host in dotted decimal, an IPv6 host in its canonical form, the
//! default port dropped, the trailing dot of a host dropped, the fragment dropped, an empty
//! path written `/`, backslashes in the path written `/`, and characters outside ASCII or
//! not allowed in a URL percent-encoded. The trailing slash of a path other than the root is
//! kept as written: `/a` and `/a/` are different addresses to a server, so they are two notes.
//! The query is kept as written.

use std::net::{Ipv4Addr, Ipv6Addr};

/// The longest URL accepted, in bytes.
pub const MAX_URL_BYTES: usize = 2_048;

/// A URL that passed [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// The normalised URL (what is fetched, and the dedup key).
    pub url: String,
    /// The host, normalised (`[...]` for IPv6).
    pub host: String,
    /// Whether it is `https`.
    pub https: bool,
}

/// Why a URL was refused (its message says what would work).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Empty, too long, or with characters no URL has.
    #[error("{0}")]
    Malformed(String),
    /// Not `http` or `https`.
    #[error("only http and https pages can be researched, not '{0}:' URLs")]
    Scheme(String),
    /// User name or password in the URL.
    #[error("the URL carries credentials (user:password@); research only public pages, without credentials in the URL")]
    Credentials,
    /// A loopback, private or otherwise non-public address.
    #[error("{0} is a {1} address, which is refused: research public pages (the writer can allow private addresses in the settings, 'researchAllowPrivate')")]
    Private(String, &'static str),
}

impl UrlError {
    /// The error's stable code for a tool result: `invalid_url` or `forbidden_address`.
    pub fn code(&self) -> &'static str {
        match self {
            UrlError::Private(..) => "forbidden_address",
            _ => "invalid_url",
        }
    }
}

fn malformed(message: impl Into<String>) -> UrlError {
    UrlError::Malformed(message.into())
}

/// Check `input` as the address of a page to research; `allow_private` lets loopback and
/// private addresses through (every other rule still holds).
pub fn check(input: &str, allow_private: bool) -> Result<Checked, UrlError> {
    // The browser removes tabs and newlines anywhere, and leading/trailing C0 and spaces.
    let cleaned: String = input
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    if cleaned.is_empty() {
        return Err(malformed(
            "the URL is empty; give a full address such as https://example.org/page",
        ));
    }
    if cleaned.len() > MAX_URL_BYTES {
        return Err(malformed(format!(
            "the URL is longer than {MAX_URL_BYTES} bytes"
        )));
    }
    if let Some(c) = cleaned
        .chars()
        .find(|c| c.is_control() || c.is_whitespace())
    {
        return Err(malformed(format!(
            "the URL contains {c:?}; spaces and control characters must be percent-encoded"
        )));
    }
    let Some((scheme, rest)) = cleaned.split_once(':') else {
        return Err(malformed(
            "the URL has no scheme; give a full address such as https://example.org/page",
        ));
    };
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(malformed(
            "the URL has no scheme; give a full address such as https://example.org/page",
        ));
    }
    let scheme = scheme.to_ascii_lowercase();
    let https = match scheme.as_str() {
        "http" => false,
        "https" => true,
        other => return Err(UrlError::Scheme(other.chars().take(20).collect())),
    };
    // Special schemes: any run of slashes and backslashes starts the authority.
    let rest = rest.trim_start_matches(['/', '\\']);
    let end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    if authority.contains('@') {
        return Err(UrlError::Credentials);
    }
    let (host_part, port) = split_port(authority)?;
    let host = parse_host(host_part)?;
    if !allow_private {
        if let Some(kind) = host.private_kind() {
            return Err(UrlError::Private(host.to_string(), kind));
        }
    }
    let port = match port {
        Some(p) if (p == 80 && !https) || (p == 443 && https) => None,
        other => other,
    };
    // Path and query; the fragment is dropped.
    let tail = tail.split('#').next().unwrap_or_default();
    let (path, query) = match tail.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (tail, None),
    };
    let mut path = encode(&path.replace('\\', "/"), false);
    if path.is_empty() {
        path.push('/');
    }
    let mut url = format!("{scheme}://{host}");
    if let Some(port) = port {
        url.push_str(&format!(":{port}"));
    }
    url.push_str(&path);
    if let Some(query) = query {
        url.push('?');
        url.push_str(&encode(query, true));
    }
    Ok(Checked {
        url,
        host: host.to_string(),
        https,
    })
}

/// Split `host[:port]` (`[v6][:port]`); the port must be digits and at most 65535.
fn split_port(authority: &str) -> Result<(&str, Option<u16>), UrlError> {
    let (host, port) = if authority.starts_with('[') {
        match authority.find(']') {
            Some(close) => {
                let (host, after) = authority.split_at(close + 1);
                match after.strip_prefix(':') {
                    Some(port) => (host, Some(port)),
                    None if after.is_empty() => (host, None),
                    None => return Err(malformed("the URL's host is not a valid IPv6 address")),
                }
            }
            None => return Err(malformed("the URL's IPv6 host has no closing ']'")),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    let port = match port {
        None | Some("") => None,
        Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => Some(
            p.parse::<u16>()
                .map_err(|_| malformed(format!("the URL's port {p} is not a port number")))?,
        ),
        Some(p) => {
            return Err(malformed(format!(
                "the URL's port '{}' is not a number",
                p.chars().take(20).collect::<String>()
            )))
        }
    };
    Ok((host, port))
}

/// A URL's host.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Host {
    Domain(String),
    V4(Ipv4Addr),
    V6(Ipv6Addr),
}

impl std::fmt::Display for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Host::Domain(d) => f.write_str(d),
            Host::V4(a) => write!(f, "{a}"),
            Host::V6(a) => write!(f, "[{a}]"),
        }
    }
}

impl Host {
    /// What kind of non-public address this is, if it is one.
    fn private_kind(&self) -> Option<&'static str> {
        match self {
            Host::V4(a) => v4_kind(*a),
            Host::V6(a) => v6_kind(*a),
            Host::Domain(d) => {
                let d = d.as_str();
                if d == "localhost" || d.ends_with(".localhost") {
                    Some("loopback")
                } else if [".local", ".internal", ".home.arpa", ".localdomain"]
                    .iter()
                    .any(|s| d.ends_with(s))
                {
                    Some("local network")
                } else {
                    None
                }
            }
        }
    }
}

fn v4_kind(a: Ipv4Addr) -> Option<&'static str> {
    let [b0, b1, b2, _] = a.octets();
    Some(match (b0, b1) {
        (127, _) => "loopback",
        (0, _) => "unspecified (this host)",
        (10, _) | (192, 168) => "private",
        (172, 16..=31) => "private",
        (169, 254) => "link-local",
        (100, 64..=127) => "shared (carrier-grade NAT)",
        (192, 0) if b2 == 0 => "reserved (IETF protocol)",
        (198, 18..=19) => "reserved (benchmarking)",
        (224..=239, _) => "multicast",
        (240..=255, _) => "reserved",
        _ => return None,
    })
}

fn v6_kind(a: Ipv6Addr) -> Option<&'static str> {
    let s = a.segments();
    if a.is_loopback() {
        return Some("loopback");
    }
    if a.is_unspecified() {
        return Some("unspecified");
    }
    // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64
    // (64:ff9b::a.b.c.d), 6to4 (2002:aabb:ccdd::).
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from(((hi as u32) << 16) | lo as u32);
    if s[0..5] == [0, 0, 0, 0, 0] && (s[5] == 0xffff || s[5] == 0) {
        return v4_kind(embedded(s[6], s[7])).or(Some("IPv4-mapped"));
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return v4_kind(embedded(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return v4_kind(embedded(s[1], s[2]));
    }
    Some(match s[0] {
        x if x & 0xfe00 == 0xfc00 => "private (unique local)",
        x if x & 0xffc0 == 0xfe80 => "link-local",
        x if x & 0xffc0 == 0xfec0 => "site-local",
        x if x & 0xff00 == 0xff00 => "multicast",
        0x2001 if s[1] == 0x0db8 => "documentation",
        _ => return None,
    })
}

/// Percent-decode a host (the browser does, before reading it).
fn percent_decode(s: &str) -> Result<String, UrlError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(b) => {
                    out.push(b);
                    i += 3;
                    continue;
                }
                None => return Err(malformed("the URL's host has a broken %-escape")),
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).map_err(|_| malformed("the URL's host is not valid UTF-8"))
}

fn parse_host(raw: &str) -> Result<Host, UrlError> {
    if raw.is_empty() {
        return Err(malformed("the URL has no host"));
    }
    if let Some(inner) = raw.strip_prefix('[') {
        let inner = inner.strip_suffix(']').unwrap_or(inner);
        if inner.contains('%') {
            return Err(malformed(
                "IPv6 zone ids (%...) are not allowed in the URL's host",
            ));
        }
        return inner
            .parse::<Ipv6Addr>()
            .map(Host::V6)
            .map_err(|_| malformed(format!("'{inner}' is not a valid IPv6 address")));
    }
    let host = percent_decode(raw)?;
    if !host.is_ascii() {
        return Err(malformed(
            "the URL's host has non-ASCII characters; write it in its punycode form (xn--...)",
        ));
    }
    let host = host.to_ascii_lowercase();
    if let Some(c) = host
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
    {
        return Err(malformed(format!(
            "the URL's host contains '{c}', which no host name has"
        )));
    }
    // A host whose last label is a number is an IPv4 address (or invalid).
    let trimmed = host.strip_suffix('.').unwrap_or(&host);
    if trimmed.is_empty() || trimmed.split('.').any(str::is_empty) {
        return Err(malformed(format!("'{host}' is not a valid host name")));
    }
    let last = trimmed.rsplit('.').next().unwrap_or_default();
    if ipv4_number(last).is_some() || last.bytes().all(|b| b.is_ascii_digit()) {
        return parse_ipv4(trimmed)
            .map(Host::V4)
            .ok_or_else(|| malformed(format!("'{host}' is not a valid IPv4 address")));
    }
    Ok(Host::Domain(trimmed.to_string()))
}

/// One part of an IPv4 address as a browser reads it: `0x…` hex, `0…` octal, else decimal.
fn ipv4_number(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) =
        if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
            (hex, 16)
        } else if part.len() > 1 && part.starts_with('0') {
            (&part[1..], 8)
        } else {
            (part, 10)
        };
    if digits.is_empty() {
        return Some(0);
    }
    if digits.len() > 20 {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// An IPv4 address in any form a browser accepts (`a`, `a.b`, `a.b.c`, `a.b.c.d`; each part
/// decimal, octal or hex; the last part fills the remaining bytes).
fn parse_ipv4(host: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = host.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let numbers: Vec<u64> = parts
        .iter()
        .map(|p| ipv4_number(p))
        .collect::<Option<_>>()?;
    let (last, init) = numbers.split_last()?;
    if init.iter().any(|n| *n > 255) {
        return None;
    }
    let room = 5 - numbers.len() as u32;
    if *last >= 256u64.pow(room) {
        return None;
    }
    let mut value = *last;
    for (i, n) in init.iter().enumerate() {
        value += n << (8 * (3 - i));
    }
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

/// Percent-encode what is not safe in a URL's path (or query): non-ASCII bytes, quotes,
/// angle brackets, backticks and braces. `%` escapes are kept as they are.
fn encode(s: &str, query: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        let escape = !b.is_ascii()
            || b < 0x21
            || matches!(b, b'"' | b'<' | b'>' | b'`' | b'{' | b'}')
            || (query && b == b'\'');
        if escape {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_forms() {
        for (text, want) in [
            ("127.0.0.1", "127.0.0.1"),
            ("2130706433", "127.0.0.1"),
            ("0x7f000001", "127.0.0.1"),
            ("0177.0.0.1", "127.0.0.1"),
            ("127.1", "127.0.0.1"),
            ("0x7f.1", "127.0.0.1"),
            ("10.0.258", "10.0.1.2"),
            ("0", "0.0.0.0"),
        ] {
            assert_eq!(parse_ipv4(text).unwrap().to_string(), want, "{text}");
        }
        for bad in [
            "256.0.0.1",
            "1.2.3.4.5",
            "4294967296",
            "09.1.1.1",
            "1.2.3.256",
        ] {
            assert_eq!(parse_ipv4(bad), None, "{bad}");
        }
    }
}
