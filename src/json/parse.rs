//! JSON text read into a `Value`: the one way the crate parses JSON text.
//!
//! serde_json's deserializer, instantiated for `Value` through serde's visitors, was about
//! 13 KB of the wasm (6 KB gzipped); this reader builds the `Value` directly. It takes what
//! serde_json takes, with the same results, and fails where serde_json fails, with serde_json's
//! messages and the line and column (in bytes, as serde_json counts them) where it stopped:
//! "expected `,` or `]` at line 1 column 7". Arrays and objects nest 127 deep at most, as in
//! serde_json (the 128th is refused).
//!
//! Numbers are read as serde_json reads them without its `float_roundtrip` feature, as the
//! release build always did: an integer is a `u64`, or an `i64` when negative, as long as it
//! fits; any other number is its first 19 or so significant digits times or divided by a power
//! of ten. That is exact for up to 15 significant digits and an exponent within ±22, at most
//! one unit in the last place off for more digits, and a few units off past ±22, where the
//! power is the product of two from tables of 23 and 14 (serde_json has a table of all 309
//! powers, 2.4 KB of wasm, for at most one unit off there).

use serde::de::Error as _;
use serde_json::{Map, Number, Value};

use crate::value::Error;

const DEPTH: u32 = 128;

/// Read JSON text into a `Value`; whitespace may surround it, nothing else may follow it.
pub fn parse(text: &str) -> Result<Value, Error> {
    let mut p = Parser {
        text,
        b: text.as_bytes(),
        at: 0,
        depth: DEPTH,
    };
    let value = p.value()?;
    p.space();
    if p.at < p.b.len() {
        return Err(p.fail_next("trailing characters"));
    }
    Ok(value)
}

/// [`parse`] for bytes, which must be UTF-8 (files read by the headless core).
#[cfg(not(target_arch = "wasm32"))]
pub fn parse_bytes(bytes: &[u8]) -> Result<Value, Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(e) => Err(failure(
            bytes,
            e.valid_up_to() + 1,
            "invalid unicode code point",
        )),
    }
}

struct Parser<'a> {
    text: &'a str,
    b: &'a [u8],
    /// Bytes read so far.
    at: usize,
    /// How many more arrays and objects may open.
    depth: u32,
}

/// `message at line L column C`, for the text up to `at` (serde_json's position: the line of
/// the last byte read and its column, counted in bytes from 1).
#[cold]
fn failure(b: &[u8], at: usize, message: &str) -> Error {
    let before = &b[..at.min(b.len())];
    let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
    let start = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    Error::custom(format_args!(
        "{message} at line {line} column {}",
        before.len() - start
    ))
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    fn space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// An error at the last byte read.
    fn fail(&self, message: &str) -> Error {
        failure(self.b, self.at, message)
    }

    /// An error at the next byte, not read yet (at the end when there is none).
    fn fail_next(&self, message: &str) -> Error {
        failure(self.b, self.at + 1, message)
    }

    fn value(&mut self) -> Result<Value, Error> {
        self.space();
        let Some(c) = self.next() else {
            return Err(self.fail("EOF while parsing a value"));
        };
        match c {
            b'n' => self.word(b"ull", Value::Null),
            b't' => self.word(b"rue", Value::Bool(true)),
            b'f' => self.word(b"alse", Value::Bool(false)),
            b'"' => self.string().map(Value::String),
            b'-' => self.number(false),
            b'0'..=b'9' => {
                self.at -= 1;
                self.number(true)
            }
            b'[' | b'{' => {
                // serde_json's limit: 127 levels are read, the 128th is refused.
                self.depth -= 1;
                if self.depth == 0 {
                    return Err(self.fail("recursion limit exceeded"));
                }
                let value = if c == b'[' {
                    self.list()
                } else {
                    self.object()
                };
                self.depth += 1;
                value
            }
            _ => Err(self.fail("expected value")),
        }
    }

    /// The rest of `null`, `true` or `false`.
    fn word(&mut self, rest: &[u8], value: Value) -> Result<Value, Error> {
        for &expected in rest {
            match self.next() {
                None => return Err(self.fail("EOF while parsing a value")),
                Some(c) if c != expected => return Err(self.fail("expected ident")),
                Some(_) => {}
            }
        }
        Ok(value)
    }

    fn list(&mut self) -> Result<Value, Error> {
        let mut items = Vec::new();
        self.space();
        match self.peek() {
            Some(b']') => {
                self.at += 1;
                return Ok(Value::Array(items));
            }
            None => return Err(self.fail_next("EOF while parsing a list")),
            Some(_) => {}
        }
        loop {
            items.push(self.value()?);
            self.space();
            match self.next() {
                Some(b']') => return Ok(Value::Array(items)),
                Some(b',') => {
                    // (At the end, the next value reports the EOF.)
                    self.space();
                    if self.peek() == Some(b']') {
                        return Err(self.fail_next("trailing comma"));
                    }
                }
                None => return Err(self.fail("EOF while parsing a list")),
                Some(_) => return Err(self.fail("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self) -> Result<Value, Error> {
        let mut map = Map::new();
        self.space();
        match self.next() {
            Some(b'}') => return Ok(Value::Object(map)),
            Some(b'"') => {}
            None => return Err(self.fail("EOF while parsing an object")),
            Some(_) => return Err(self.fail("key must be a string")),
        }
        loop {
            let key = self.string()?;
            self.space();
            match self.next() {
                Some(b':') => {}
                None => return Err(self.fail("EOF while parsing an object")),
                Some(_) => return Err(self.fail("expected `:`")),
            }
            let value = self.value()?;
            map.insert(key, value);
            self.space();
            match self.next() {
                Some(b'}') => return Ok(Value::Object(map)),
                Some(b',') => {}
                None => return Err(self.fail("EOF while parsing an object")),
                Some(_) => return Err(self.fail("expected `,` or `}`")),
            }
            self.space();
            match self.next() {
                Some(b'"') => {}
                Some(b'}') => return Err(self.fail("trailing comma")),
                None => return Err(self.fail("EOF while parsing a value")),
                Some(_) => return Err(self.fail("key must be a string")),
            }
        }
    }

    /// A string's contents and its closing quote (the opening one is read).
    fn string(&mut self) -> Result<String, Error> {
        let mut out = String::new();
        loop {
            let start = self.at;
            while let Some(c) = self.peek() {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.at += 1;
            }
            // Cut at ASCII bytes only, so on character boundaries.
            out.push_str(&self.text[start..self.at]);
            match self.next() {
                Some(b'"') => break,
                Some(b'\\') => self.escape(&mut out)?,
                Some(_) => {
                    return Err(self
                        .fail("control character (\\u0000-\\u001F) found while parsing a string"))
                }
                None => return Err(self.fail("EOF while parsing a string")),
            }
        }
        Ok(out)
    }

    /// One escape after its backslash.
    fn escape(&mut self, out: &mut String) -> Result<(), Error> {
        let c = match self.next() {
            None => return Err(self.fail("EOF while parsing a string")),
            Some(c) => c,
        };
        let byte = match c {
            b'"' | b'\\' | b'/' => c,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let mut n = u32::from(self.hex()?);
                if (0xDC00..=0xDFFF).contains(&n) {
                    return Err(self.fail("lone leading surrogate in hex escape"));
                }
                if (0xD800..=0xDBFF).contains(&n) {
                    if self.next() != Some(b'\\') || self.next() != Some(b'u') {
                        return Err(self.fail("unexpected end of hex escape"));
                    }
                    let low = u32::from(self.hex()?);
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return Err(self.fail("lone leading surrogate in hex escape"));
                    }
                    n = 0x1_0000 + ((n - 0xD800) << 10) + (low - 0xDC00);
                }
                let c = char::from_u32(n).ok_or_else(|| self.fail("invalid unicode code point"))?;
                out.push(c);
                return Ok(());
            }
            _ => return Err(self.fail("invalid escape")),
        };
        out.push(char::from(byte));
        Ok(())
    }

    /// The four hex digits of a `\u` escape (all four read before any is checked).
    fn hex(&mut self) -> Result<u16, Error> {
        let Some(digits) = self.b.get(self.at..self.at + 4) else {
            self.at = self.b.len();
            return Err(self.fail("EOF while parsing a string"));
        };
        self.at += 4;
        let mut n = 0u16;
        for &c in digits {
            let digit = match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => return Err(self.fail("invalid escape")),
            };
            n = n * 16 + u16::from(digit);
        }
        Ok(n)
    }

    fn digit(&self) -> Option<u64> {
        match self.peek() {
            Some(c @ b'0'..=b'9') => Some(u64::from(c - b'0')),
            _ => None,
        }
    }

    /// A number, after its sign if it has one.
    fn number(&mut self, positive: bool) -> Result<Value, Error> {
        let mut significand = match self.next() {
            None => return Err(self.fail("EOF while parsing a value")),
            Some(b'0') => {
                if self.digit().is_some() {
                    return Err(self.fail_next("invalid number"));
                }
                0
            }
            Some(c @ b'1'..=b'9') => u64::from(c - b'0'),
            Some(_) => return Err(self.fail("invalid number")),
        };
        // Digits past what a u64 holds are dropped, and the exponent counts them.
        let mut exponent: i32 = 0;
        let mut full = false;
        let mut add = |significand: &mut u64, digit: u64| -> bool {
            if !full {
                match significand
                    .checked_mul(10)
                    .and_then(|s| s.checked_add(digit))
                {
                    Some(s) => *significand = s,
                    None => full = true,
                }
            }
            !full
        };
        let mut float = false;
        while let Some(d) = self.digit() {
            self.at += 1;
            if !add(&mut significand, d) {
                float = true;
                exponent += 1;
            }
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            float = true;
            if self.digit().is_none() {
                return Err(if self.peek().is_some() {
                    self.fail_next("invalid number")
                } else {
                    self.fail("EOF while parsing a value")
                });
            }
            while let Some(d) = self.digit() {
                self.at += 1;
                if add(&mut significand, d) {
                    exponent -= 1;
                }
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            float = true;
            let up = match self.peek() {
                Some(b'-') => {
                    self.at += 1;
                    false
                }
                Some(b'+') => {
                    self.at += 1;
                    true
                }
                _ => true,
            };
            match self.next() {
                None => return Err(self.fail("EOF while parsing a value")),
                Some(b'0'..=b'9') => self.at -= 1,
                Some(_) => return Err(self.fail("invalid number")),
            }
            let mut e: i32 = 0;
            while let Some(d) = self.digit() {
                self.at += 1;
                match e.checked_mul(10).and_then(|e| e.checked_add(d as i32)) {
                    Some(n) => e = n,
                    // An exponent past i32: infinite, or zero.
                    None if significand != 0 && up => return Err(self.fail("number out of range")),
                    None => {
                        while self.digit().is_some() {
                            self.at += 1;
                        }
                        return Ok(float_value(if positive { 0.0 } else { -0.0 }));
                    }
                }
            }
            exponent = if up {
                exponent.saturating_add(e)
            } else {
                exponent.saturating_sub(e)
            };
        }
        if !float {
            return Ok(if positive {
                Value::from(significand)
            } else {
                // `-0`, and what is below i64's range, are floats (as serde_json has them).
                match (significand as i64).wrapping_neg() {
                    n if n < 0 => Value::from(n),
                    _ => float_value(-(significand as f64)),
                }
            });
        }
        // Times or divided by 10^|exponent|, made of an exact power (up to 10^22) and a power
        // 10^23k from a table of 14: one operation by an exact power, so the nearest `f64`,
        // for exponents within ±22 and up to 2^53.
        let mut f = significand as f64;
        if f != 0.0 {
            // Past 10^-308, steps down into the subnormal numbers first.
            while exponent < -308 {
                f /= POW10_23K[13];
                exponent += 299;
            }
            let e = exponent.unsigned_abs() as usize;
            let pow = match e {
                // At least 10^309: infinite.
                309.. => f64::INFINITY,
                _ => POW10_23K[e / 23] * POW10[e % 23],
            };
            f = if exponent >= 0 { f * pow } else { f / pow };
            if f.is_infinite() {
                return Err(self.fail("number out of range"));
            }
        }
        Ok(float_value(if positive { f } else { -f }))
    }
}

/// A finite float as a `Value` (every float the reader makes is finite).
fn float_value(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// 10^0 to 10^22: the powers of ten an `f64` holds exactly.
static POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// 10^23k for k from 0 to 13, each the nearest `f64`.
static POW10_23K: [f64; 14] = [
    1e0, 1e23, 1e46, 1e69, 1e92, 1e115, 1e138, 1e161, 1e184, 1e207, 1e230, 1e253, 1e276, 1e299,
];

// Native only: proptest is a native dev-dependency. The tests' serde_json has
// `float_roundtrip` (a dev-dependency feature), so it reads every float exactly: floats are
// compared within four units in the last place (the most seen in a million read back was
// three), and exactly where this reader is exact.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Equal, the floats within four units in the last place.
    fn close(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) if x.is_f64() && y.is_f64() => {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                x.to_bits().abs_diff(y.to_bits()) <= 4
                    && x.is_sign_negative() == y.is_sign_negative()
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| close(a, b))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((k, a), (l, b))| k == l && close(a, b))
            }
            _ => a == b,
        }
    }

    /// Both readers agree: the same value (floats within four units in the last place) or the
    /// same error, message and position.
    fn agree(text: &str) -> Result<(), String> {
        let ours = parse(text).map_err(|e| e.to_string());
        let theirs = serde_json::from_str::<Value>(text).map_err(|e| e.to_string());
        let same = match (&ours, &theirs) {
            (Ok(a), Ok(b)) => close(a, b),
            (a, b) => a == b,
        };
        if same {
            Ok(())
        } else {
            Err(format!("{text:?}: ours {ours:?}, serde_json {theirs:?}"))
        }
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            "null",
            " true ",
            "false",
            "0",
            "-0",
            "-0.0",
            "1",
            "-1",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "123456789012345678901234567890",
            "1.5",
            "0.1",
            "1e22",
            "1E+2",
            "2.5e-3",
            "1e-400",
            "-1e-400",
            "0e999999999999",
            "1.7976931348623157e308",
            "4.9e-324",
            "\"\"",
            r#""a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC\ud83d\ude00 plain é""#,
            "[]",
            "[ ]",
            "{}",
            "{ }",
            "[1, [2, [3]], {\"a\": {\"b\": []}}]",
            "{\"a\": 1, \"a\": 2}",
            "\n\t\r [1,\n 2]\n",
        ] {
            agree(text).unwrap();
            assert!(parse(text).is_ok(), "{text}");
        }
        assert_eq!(
            parse("-0").unwrap().as_f64().map(f64::is_sign_negative),
            Some(true)
        );
        assert_eq!(
            parse("-9223372036854775808").unwrap(),
            Value::from(i64::MIN)
        );
        assert_eq!(
            parse("18446744073709551615").unwrap(),
            Value::from(u64::MAX)
        );
        assert!(parse("18446744073709551616").unwrap().is_f64());
        // Exact: up to 15 significant digits, exponents within ±22.
        for (text, x) in [
            ("0.1", 0.1),
            ("1e22", 1e22),
            ("123.456e-7", 123.456e-7),
            ("-2.5", -2.5),
        ] {
            assert_eq!(parse(text).unwrap().as_f64(), Some(x), "{text}");
        }
    }

    #[test]
    fn fails_where_serde_json_fails_and_says_the_same() {
        for text in [
            "",
            "   ",
            "nul",
            "nulx",
            "tru",
            "x",
            "-",
            "-x",
            "01",
            "1.",
            "1.x",
            "1e",
            "1e+",
            "1ex",
            "1e999",
            "1e99999999999",
            "-1e99999999999",
            ".5",
            "+1",
            "\"abc",
            "\"a\\",
            "\"a\\x\"",
            "\"a\\u12\"",
            "\"a\\u12g4\"",
            "\"\\ud83d\"",
            "\"\\ud83dx\"",
            "\"\\ud83d\\n\"",
            "\"\\ud83d\\u0041\"",
            "\"\\ude00\"",
            "\"tab\there\"",
            "[",
            "[1",
            "[1,",
            "[1,]",
            "[1 2]",
            "[1,\n ]",
            "{",
            "{1:2}",
            "{\"a\"",
            "{\"a\" 1}",
            "{\"a\":",
            "{\"a\":1",
            "{\"a\":1,",
            "{\"a\":1,}",
            "{\"a\":1,2}",
            "{\"a\":1 \"b\":2}",
            "1 2",
            "[] x",
            "{}\n\n  }",
            "[1]]",
        ] {
            agree(text).unwrap();
            assert!(parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn nesting_stops_where_serde_json_stops() {
        for depth in [126, 127, 128, 129, 1000] {
            agree(&format!("{}{}", "[".repeat(depth), "]".repeat(depth))).unwrap();
            agree(&format!(
                "{}1{}",
                "{\"a\":".repeat(depth),
                "}".repeat(depth)
            ))
            .unwrap();
        }
        assert!(parse(&format!("{}{}", "[".repeat(127), "]".repeat(127))).is_ok());
        assert_eq!(
            parse(&"[".repeat(100_000)).unwrap_err().to_string(),
            "recursion limit exceeded at line 1 column 128"
        );
    }

    #[test]
    fn bytes_must_be_utf8() {
        assert_eq!(parse_bytes(b"[1]").unwrap(), serde_json::json!([1]));
        assert_eq!(
            parse_bytes(b"\"ab\xff\"").unwrap_err().to_string(),
            "invalid unicode code point at line 1 column 4"
        );
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<u64>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            // Any float a JSON text can hold (not the near-overflow edge: there a product one
            // unit off may be infinite, which this reader refuses as out of range).
            any::<f64>()
                .prop_filter("finite", |x| x.is_finite() && x.abs() < 1e300)
                .prop_map(Value::from),
            (
                -1_000_000_000_000_000i64..1_000_000_000_000_000,
                -22i32..=22
            )
                .prop_map(|(m, e)| Value::from(m as f64 * 10f64.powi(e))),
            "\\PC*".prop_map(Value::String),
            prop::collection::vec(any::<char>(), 0..8)
                .prop_map(|c| Value::String(c.into_iter().collect())),
        ];
        leaf.prop_recursive(5, 64, 8, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
                prop::collection::btree_map("\\PC{0,6}", inner, 0..8)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Short texts from JSON's own characters, most of them not JSON.
    fn near_json() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(vec![
                "[", "]", "{", "}", ",", ":", "\"", "\\", "u", "0", "1", "9", "-", "+", ".", "e",
                "E", "true", "null", "fals", " ", "\n", "\t", "\"a\"", "d83d", "de00", "é",
                "\u{1}",
            ]),
            0..24,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// What serde_json writes, compact or pretty, reads back as the same value.
        #[test]
        fn reads_back_what_serde_json_writes(v in value(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                serde_json::to_string(&v).unwrap()
            };
            let read = parse(&text).unwrap();
            prop_assert!(close(&read, &v), "{} read as {}", text, read);
        }

        /// Any cut or one-byte change of a valid text: the same value or the same error.
        #[test]
        fn agrees_on_damaged_text(v in value(), cut in any::<prop::sample::Index>(), byte in any::<u8>(), change in 0u8..3) {
            let mut text = serde_json::to_string(&v).unwrap().into_bytes();
            let at = cut.index(text.len() + 1);
            match change {
                0 => text.truncate(at),
                1 if at < text.len() => text[at] = byte,
                _ => text.insert(at, byte),
            }
            if let Ok(text) = String::from_utf8(text) {
                agree(&text).map_err(TestCaseError::fail)?;
            }
        }

        #[test]
        fn agrees_on_near_json(text in near_json()) {
            agree(&text).map_err(TestCaseError::fail)?;
        }
    }
}
