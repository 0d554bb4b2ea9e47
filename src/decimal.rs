//! Floats in messages, written without core's float formatting.
//!
//! `{}` or `{:.2}` of an `f64` brings core's float formatter into the wasm (Grisu with its
//! Dragon fallback and their tables of powers: about 10 KB, mostly code and tables that gzip
//! hardly shrinks). The crate's messages show a few floats with a few decimals (a
//! similarity, an average, a number of seconds), so [`Fixed`] writes them instead, with the
//! text core's `{:.N}` writes: the value rounded to `N` decimals, half to even on its exact
//! binary value, as core rounds. It is exact below 2^64 / 10^N; larger values (which no
//! message shows) are written in serde_json's shortest form with `N` zeros after the point.
//! Floats written whole (`{}`) go through serde_json's float writer, which is in the wasm
//! anyway (`Value::Number`'s `Display`).

use std::fmt;

/// `{:.N}` of an `f64` (see the module docs): `Fixed(x, 2)` writes what `{:.2}` writes.
#[derive(Debug, Clone, Copy)]
pub struct Fixed(pub f64, pub u8);

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&fixed(self.0, self.1))
    }
}

/// `format!("{:.places$}", x)` (see [`Fixed`]).
pub fn fixed(x: f64, places: u8) -> String {
    let places = usize::from(places.min(18));
    let sign = if x.is_sign_negative() && !x.is_nan() {
        "-"
    } else {
        ""
    };
    let a = x.abs();
    // 2^64: below it the integer part fits a u64. NaN and infinities are not below it.
    if a.is_nan() || a >= 18_446_744_073_709_551_616.0 {
        let mut out = plain(x);
        if a.is_finite() {
            if out.ends_with(".0") {
                out.truncate(out.len() - 2);
            }
            if places > 0 {
                out.push('.');
                out.extend(std::iter::repeat_n('0', places));
            }
        }
        return out;
    }
    let mut int = a as u64;
    // Exact: the integer part of a float is a float, and so is what is left.
    let frac = a - int as f64;
    let scale = 10u64.pow(places as u32);
    // A tie rounds to the even last digit: that of `int` itself when there are no decimals,
    // else of the decimals (`int * scale` is even).
    let mut decimals = scaled(frac, scale, places == 0 && int & 1 == 1);
    if decimals == scale {
        int += 1;
        decimals = 0;
    }
    let mut out = format!("{sign}{int}");
    if places > 0 {
        let digits = decimals.to_string();
        out.push('.');
        out.extend(std::iter::repeat_n('0', places - digits.len()));
        out.push_str(&digits);
    }
    out
}

/// `frac * scale` rounded half to even, exactly, for `0 <= frac < 1`; `odd`: the digits
/// before count as odd for the tie.
fn scaled(frac: f64, scale: u64, odd: bool) -> u64 {
    let bits = frac.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    // frac = mantissa * 2^power, with power < 0 as frac < 1 (or frac = 0).
    let (mantissa, power) = match exponent {
        0 => (fraction, -1074),
        _ => (fraction | 1 << 52, exponent - 1075),
    };
    // mantissa < 2^53 and scale <= 10^18 < 2^60: the product fits a u128.
    let product = u128::from(mantissa) * u128::from(scale);
    let shift = power.unsigned_abs();
    if shift >= 128 {
        // product < 2^113: less than half of 2^shift, so it rounds to 0.
        return 0;
    }
    let quotient = product >> shift;
    let rest = product & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let up = rest > half || (rest == half && ((quotient & 1 == 1) != odd));
    // quotient <= scale: frac < 1.
    (quotient + u128::from(up)) as u64
}

/// Infinities and NaN as core writes them; other values in serde_json's shortest form.
fn plain(x: f64) -> String {
    match serde_json::Number::from_f64(x) {
        Some(n) => n.to_string(),
        None if x.is_nan() => "NaN".into(),
        None if x > 0.0 => "inf".into(),
        None => "-inf".into(),
    }
}

// Native only: proptest is a native dev-dependency.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn fixed_writes_what_core_writes_at_the_edges() {
        let values = [
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -2.5,
            0.125,
            0.375,
            0.145,
            1.005,
            9.995,
            99.5,
            0.05,
            -0.04,
            1e-300,
            5e-324,
            123456.789,
            0.999,
            1e15,
            1.8e19,
            1e19,
            3.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            0.1,
            0.2,
            0.3,
        ];
        for x in values {
            for places in 0..=6u8 {
                let core = format!("{:.*}", places as usize, x);
                if x.abs() < 1.8e19 {
                    assert_eq!(fixed(x, places), core, "{x} with {places} places");
                }
            }
        }
        assert_eq!(fixed(f64::NAN, 2), "NaN");
        assert_eq!(fixed(f64::INFINITY, 2), "inf");
        assert_eq!(fixed(f64::NEG_INFINITY, 0), "-inf");
        assert_eq!(Fixed(0.8712, 2).to_string(), "0.87");
    }

    proptest! {
        #[test]
        fn fixed_writes_what_core_writes(x in -1e12f64..1e12, places in 0u8..=6) {
            prop_assert_eq!(fixed(x, places), format!("{:.*}", places as usize, x));
        }

        /// Any float below 2^64, its exponent drawn uniformly (subnormals included).
        #[test]
        fn fixed_writes_what_core_writes_for_any_exponent(
            negative in any::<bool>(),
            exponent in 0u64..1023 + 64,
            fraction in 0u64..1 << 52,
            places in 0u8..=8,
        ) {
            let x = f64::from_bits(u64::from(negative) << 63 | exponent << 52 | fraction);
            prop_assert_eq!(fixed(x, places), format!("{:.*}", places as usize, x));
        }
    }
}
