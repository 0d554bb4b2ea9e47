//! When to retry a model call, and how long to wait.
//!
//! - 429 and 503 honour the server's wait: `retry-after-ms` (milliseconds), else
//!   `Retry-After` in seconds or as an HTTP date; without one they back off like other
//!   transient failures.
//! - Other 5xx responses, 408, and network errors retry with bounded exponential backoff and
//!   jitter: `min(max_delay, base · 2^attempt) · (0.5 + jitter/2)`, where `jitter` in `[0, 1)`
//!   comes from the caller (so tests are deterministic).
//! - 400, 401, 403, 404 and 422 (and any other 4xx) never retry: the request itself is wrong.
//! - A server wait longer than [`RetryPolicy::max_server_wait_ms`] is not honoured: the call
//!   fails with the provider's message instead of hanging.

/// Bounds on retrying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub max_attempts: u32,
    /// The first backoff delay (ms).
    pub base_delay_ms: u64,
    /// The longest backoff delay (ms).
    pub max_delay_ms: u64,
    /// The longest server-requested wait honoured (ms).
    pub max_server_wait_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay_ms: 500,
            max_delay_ms: 8_000,
            max_server_wait_ms: 60_000,
        }
    }
}

/// What went wrong with one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The server answered with this HTTP status.
    Status(u16),
    /// The connection failed or dropped before an answer.
    Network,
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Wait this long, then try again.
    RetryAfter(u64),
    /// Give up.
    GiveUp,
}

/// Whether a status is worth retrying at all.
pub fn is_retryable(failure: Failure) -> bool {
    match failure {
        Failure::Network => true,
        Failure::Status(status) => status == 408 || status == 429 || (500..=599).contains(&status),
    }
}

impl RetryPolicy {
    /// The decision after attempt number `attempt` (1-based) failed. `headers` are the
    /// response's headers (names compared case-insensitively), `now_ms` the current time (for
    /// an HTTP-date `Retry-After`), `jitter` a number in `[0, 1)`.
    pub fn decide(
        &self,
        attempt: u32,
        failure: Failure,
        headers: &[(String, String)],
        now_ms: u64,
        jitter: f64,
    ) -> Decision {
        if attempt >= self.max_attempts || !is_retryable(failure) {
            return Decision::GiveUp;
        }
        if matches!(failure, Failure::Status(429 | 503)) {
            if let Some(wait) = server_wait_ms(headers, now_ms) {
                return if wait <= self.max_server_wait_ms {
                    Decision::RetryAfter(wait)
                } else {
                    Decision::GiveUp
                };
            }
        }
        Decision::RetryAfter(self.backoff_ms(attempt, jitter))
    }

    /// The backoff before attempt `attempt + 1`.
    pub fn backoff_ms(&self, attempt: u32, jitter: f64) -> u64 {
        let exp = self
            .base_delay_ms
            .saturating_mul(1u64 << attempt.saturating_sub(1).min(30));
        let capped = exp.min(self.max_delay_ms) as f64;
        let jitter = if jitter.is_finite() {
            jitter.clamp(0.0, 1.0)
        } else {
            0.5
        };
        (capped * (0.5 + jitter / 2.0)).round() as u64
    }
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

/// The wait a server asked for: `retry-after-ms`, else `Retry-After` (seconds, possibly
/// fractional, or an HTTP date relative to `now_ms`; a date in the past means no wait).
pub fn server_wait_ms(headers: &[(String, String)], now_ms: u64) -> Option<u64> {
    if let Some(ms) = header(headers, "retry-after-ms").and_then(number) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(ms.ceil() as u64);
        }
    }
    let value = header(headers, "retry-after")?;
    if let Some(seconds) = number(value) {
        return (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).ceil() as u64);
    }
    http_date_ms(value).map(|at| at.saturating_sub(now_ms))
}

/// A header's number (`120`, `1.5`, `2e3`), read as JSON reads one: the JSON reader is in the
/// wasm anyway, and `str::parse::<f64>` would add core's with its tables of powers (16.5 KB
/// raw, 13 KB gzip -9 of wasm).
fn number(value: &str) -> Option<f64> {
    match serde_json::from_str::<serde_json::Value>(value) {
        Ok(serde_json::Value::Number(n)) => n.as_f64(),
        _ => None,
    }
}

/// Parse an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) to milliseconds since the epoch.
pub fn http_date_ms(value: &str) -> Option<u64> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, zone] = parts.as_slice() else {
        return None;
    };
    if *zone != "GMT" && *zone != "UTC" {
        return None;
    }
    let day: u64 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m.eq_ignore_ascii_case(month))? as u64
        + 1;
    let year: u64 = year.parse().ok()?;
    let hms: Vec<u64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *s > 60 || year < 1970 {
        return None;
    }
    // Days from 1970-01-01 to the date (civil-from-days, Howard Hinnant's algorithm).
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = (era * 146_097 + doe).checked_sub(719_468)?;
    Some(((days * 86_400) + h * 3600 + m * 60 + s) * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn http_dates() {
        assert_eq!(
            http_date_ms("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777_000)
        );
        assert_eq!(http_date_ms("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            http_date_ms("Sun, 22 Nov 2026 03:00:00 GMT"),
            Some(1_795_316_400_000)
        );
        assert_eq!(http_date_ms("Sun, 06 Nov 1994 08:49:37 PST"), None);
        assert_eq!(http_date_ms("tomorrow"), None);
        assert_eq!(http_date_ms("Sun, 32 Nov 1994 08:49:37 GMT"), None);
    }

    #[test]
    fn server_waits() {
        assert_eq!(server_wait_ms(&h(&[("Retry-After", "2")]), 0), Some(2000));
        assert_eq!(server_wait_ms(&h(&[("retry-after", "0.5")]), 0), Some(500));
        assert_eq!(
            server_wait_ms(&h(&[("retry-after-ms", "1234"), ("Retry-After", "9")]), 0),
            Some(1234)
        );
        let now = http_date_ms("Sun, 22 Nov 2026 03:00:00 GMT").unwrap();
        assert_eq!(
            server_wait_ms(&h(&[("Retry-After", "Sun, 22 Nov 2026 03:00:03 GMT")]), now),
            Some(3000)
        );
        assert_eq!(
            server_wait_ms(&h(&[("Retry-After", "Sun, 22 Nov 2026 02:00:00 GMT")]), now),
            Some(0)
        );
        assert_eq!(server_wait_ms(&h(&[("Retry-After", "-1")]), 0), None);
        // Numbers as JSON writes them; anything else is no number (nor a date).
        assert_eq!(
            server_wait_ms(&h(&[("Retry-After", "1e1")]), 0),
            Some(10_000)
        );
        assert_eq!(server_wait_ms(&h(&[("retry-after-ms", "2.5")]), 0), Some(3));
        assert_eq!(server_wait_ms(&h(&[("Retry-After", "soon")]), 0), None);
        assert_eq!(server_wait_ms(&h(&[("Retry-After", "[1]")]), 0), None);
        assert_eq!(server_wait_ms(&h(&[]), 0), None);
    }

    #[test]
    fn decisions() {
        let p = RetryPolicy::default();
        let none = h(&[]);
        for status in [400, 401, 403, 404, 422] {
            assert_eq!(
                p.decide(1, Failure::Status(status), &none, 0, 0.5),
                Decision::GiveUp,
                "{status}"
            );
        }
        assert_eq!(
            p.decide(1, Failure::Status(429), &h(&[("Retry-After", "3")]), 0, 0.0),
            Decision::RetryAfter(3000)
        );
        assert_eq!(
            p.decide(
                1,
                Failure::Status(503),
                &h(&[("retry-after-ms", "250")]),
                0,
                0.0
            ),
            Decision::RetryAfter(250)
        );
        assert_eq!(
            p.decide(
                1,
                Failure::Status(429),
                &h(&[("Retry-After", "600")]),
                0,
                0.0
            ),
            Decision::GiveUp
        );
        // Backoff grows, is capped, and jitter scales it between half and all of it.
        assert_eq!(
            p.decide(1, Failure::Status(500), &none, 0, 0.0),
            Decision::RetryAfter(250)
        );
        assert_eq!(
            p.decide(2, Failure::Network, &none, 0, 0.999_999),
            Decision::RetryAfter(1000)
        );
        assert_eq!(p.backoff_ms(10, 1.0), 8000);
        assert_eq!(p.backoff_ms(40, 0.0), 4000);
        assert_eq!(
            p.decide(4, Failure::Status(500), &none, 0, 0.5),
            Decision::GiveUp,
            "attempts are bounded"
        );
    }
}
