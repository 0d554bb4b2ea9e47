//! The URL checks of `research_url`: a table of addresses, each either accepted (with its
//! normalised form, the dedup key) or refused (with the reason's code), private addresses
//! refused unless the writer allows them.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::research::url::{check, UrlError};

/// `(url, Ok(normalised) | Err(code))` with private addresses refused.
const TABLE: &[(&str, Result<&str, &str>)] = &[
    // Accepted, normalised.
    ("https://example.org/page", Ok("https://example.org/page")),
    ("HTTPS://Example.ORG/Page", Ok("https://example.org/Page")),
    ("http://example.org", Ok("http://example.org/")),
    ("http://example.org:80/a", Ok("http://example.org/a")),
    ("https://example.org:443/a", Ok("https://example.org/a")),
    (
        "https://example.org:8443/a",
        Ok("https://example.org:8443/a"),
    ),
    (
        "https://example.org/a/#section",
        Ok("https://example.org/a/"),
    ),
    (
        "https://example.org/a?q=1#x",
        Ok("https://example.org/a?q=1"),
    ),
    ("  https://example.org/a\n", Ok("https://example.org/a")),
    ("https://exam\tple.org/a", Ok("https://example.org/a")),
    ("https://example.org./a", Ok("https://example.org/a")),
    ("http:\\\\example.org\\a\\b", Ok("http://example.org/a/b")),
    (
        "https://example.org/caf\u{e9}",
        Ok("https://example.org/caf%C3%A9"),
    ),
    ("http://8.8.8.8/", Ok("http://8.8.8.8/")),
    ("http://134744072/", Ok("http://8.8.8.8/")),
    (
        "http://[2606:4700:4700::1111]/",
        Ok("http://[2606:4700:4700::1111]/"),
    ),
    (
        "https://xn--caf-dma.example/",
        Ok("https://xn--caf-dma.example/"),
    ),
    (
        "https://localhost.example.com/",
        Ok("https://localhost.example.com/"),
    ),
    // Not http(s).
    ("file:///etc/passwd", Err("invalid_url")),
    ("javascript:alert(1)", Err("invalid_url")),
    (
        "data:text/html,<script>alert(1)</script>",
        Err("invalid_url"),
    ),
    ("ftp://example.org/file", Err("invalid_url")),
    ("JaVaScRiPt:alert(1)", Err("invalid_url")),
    ("//example.org/a", Err("invalid_url")),
    ("example.org/a", Err("invalid_url")),
    ("", Err("invalid_url")),
    // Credentials.
    ("https://user:pass@example.org/", Err("invalid_url")),
    ("https://user@example.org/", Err("invalid_url")),
    ("https://@example.org/", Err("invalid_url")),
    ("https://example.org@127.0.0.1/", Err("invalid_url")),
    // Malformed.
    ("https://example.org/a b", Err("invalid_url")),
    ("https://exa mple.org/", Err("invalid_url")),
    ("https://example.org:99999/", Err("invalid_url")),
    ("https://example.org:8x/", Err("invalid_url")),
    ("https:///", Err("invalid_url")),
    ("https://[::1/", Err("invalid_url")),
    ("http://256.1.1.1/", Err("invalid_url")),
    ("http://09.1.1.1/", Err("invalid_url")),
    ("https://ex%ample.org/", Err("invalid_url")),
    (
        "https://\u{ff11}\u{ff12}\u{ff17}.0.0.1/",
        Err("invalid_url"),
    ),
    ("https://[fe80::1%25eth0]/", Err("invalid_url")),
    // Loopback, in every form a browser reads.
    ("http://127.0.0.1/", Err("forbidden_address")),
    ("http://127.1/", Err("forbidden_address")),
    ("http://2130706433/", Err("forbidden_address")),
    ("http://0x7f000001/", Err("forbidden_address")),
    ("http://0177.0.0.1/", Err("forbidden_address")),
    ("http://0x7f.0.0.1/", Err("forbidden_address")),
    ("http://%31%32%37.0.0.1/", Err("forbidden_address")),
    ("http://127.0.0.1./", Err("forbidden_address")),
    ("http://localhost:8080/", Err("forbidden_address")),
    ("http://LOCALHOST/", Err("forbidden_address")),
    ("http://app.localhost/", Err("forbidden_address")),
    ("http://[::1]/", Err("forbidden_address")),
    ("http://[0:0:0:0:0:0:0:1]/", Err("forbidden_address")),
    ("http://[::ffff:127.0.0.1]/", Err("forbidden_address")),
    ("http://[::ffff:7f00:1]/", Err("forbidden_address")),
    ("http://[::127.0.0.1]/", Err("forbidden_address")),
    ("http://0.0.0.0/", Err("forbidden_address")),
    ("http://0/", Err("forbidden_address")),
    ("http://[::]/", Err("forbidden_address")),
    // Private, link-local and the rest.
    ("http://10.0.0.1/", Err("forbidden_address")),
    ("http://172.16.0.1/", Err("forbidden_address")),
    ("http://172.31.255.255/", Err("forbidden_address")),
    ("http://192.168.1.1/", Err("forbidden_address")),
    (
        "http://169.254.169.254/latest/meta-data/",
        Err("forbidden_address"),
    ),
    ("http://100.64.0.1/", Err("forbidden_address")),
    ("http://224.0.0.1/", Err("forbidden_address")),
    ("http://255.255.255.255/", Err("forbidden_address")),
    ("http://[fc00::1]/", Err("forbidden_address")),
    ("http://[fd12:3456::1]/", Err("forbidden_address")),
    ("http://[fe80::1]/", Err("forbidden_address")),
    ("http://[::ffff:10.0.0.1]/", Err("forbidden_address")),
    ("http://[::ffff:169.254.169.254]/", Err("forbidden_address")),
    ("http://[64:ff9b::127.0.0.1]/", Err("forbidden_address")),
    ("http://[2002:7f00:1::]/", Err("forbidden_address")),
    ("http://printer.local/", Err("forbidden_address")),
    ("http://db.internal/", Err("forbidden_address")),
    // Just outside the private ranges: public.
    ("http://172.15.255.255/", Ok("http://172.15.255.255/")),
    ("http://172.32.0.1/", Ok("http://172.32.0.1/")),
    ("http://100.128.0.1/", Ok("http://100.128.0.1/")),
    ("http://11.0.0.1/", Ok("http://11.0.0.1/")),
];

#[test]
fn the_table_refuses_exactly_the_bad_urls() {
    assert!(TABLE.len() >= 30);
    let mut wrong = Vec::new();
    for (url, want) in TABLE {
        let got = check(url, false)
            .map(|c| c.url)
            .map_err(|e| (e.code(), e.to_string()));
        let ok = match (&got, want) {
            (Ok(n), Ok(w)) => n == w,
            (Err((code, _)), Err(w)) => code == w,
            _ => false,
        };
        if !ok {
            wrong.push(format!("{url:?}: got {got:?}, want {want:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_writer_can_allow_private_addresses_and_nothing_else() {
    for (url, want) in TABLE {
        let got = check(url, true);
        match want {
            Err("forbidden_address") => {
                let checked = got.unwrap_or_else(|e| panic!("{url}: {e}"));
                assert!(checked.url.starts_with("http://"), "{url}");
            }
            Err(code) => assert_eq!(got.map_err(|e| e.code()).err(), Some(*code), "{url}"),
            Ok(norm) => assert_eq!(got.unwrap().url, *norm, "{url}"),
        }
    }
    // The forms of loopback all normalise to one key.
    for url in [
        "http://127.1/",
        "http://2130706433/",
        "http://0x7f.0.0.1/",
        "http://%31%32%37.0.0.1/",
    ] {
        assert_eq!(check(url, true).unwrap().url, "http://127.0.0.1/", "{url}");
    }
    assert_eq!(
        check("http://[::FFFF:7f00:1]/x", true).unwrap().url,
        "http://[::ffff:127.0.0.1]/x"
    );
}

#[test]
fn errors_tell_the_model_what_would_work() {
    let e = check("http://127.0.0.1/", false).unwrap_err();
    assert!(matches!(e, UrlError::Private(..)));
    assert!(e.to_string().contains("researchAllowPrivate"), "{e}");
    let e = check("file:///etc/passwd", false).unwrap_err();
    assert!(e.to_string().contains("only http and https"), "{e}");
    let e = check("https://u:p@example.org/", false).unwrap_err();
    assert!(e.to_string().contains("credentials"), "{e}");
}
