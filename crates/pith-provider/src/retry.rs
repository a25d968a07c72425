//! Retry policy: exponential backoff with jitter, honouring `retry-after` up to a bound.
//!
//! The engine runs the loop: on a retryable error it asks [`RetryPolicy::delay`] for the wait
//! before attempt `n`, emits `TurnEvent::Retrying` and sleeps; `None` means give up, and
//! [`RetryPolicy::final_message`] says why.

use std::time::Duration;

use super::error::ProviderError;
use pith_config::ProviderConfig;

/// The longest wait before one retry, unless configured (`max_retry_wait_secs`): a server asking
/// for longer (`retry-after`) gets its error reported at once rather than a silent wait.
pub(crate) const DEFAULT_MAX_WAIT: Duration = Duration::from_secs(60);

/// The wait before the one retry of a connection that could not be made.
pub(crate) const UNREACHABLE_WAIT: Duration = Duration::from_millis(500);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = never retry).
    pub max_retries: u32,
    /// Delay before the first retry (doubled for each further one).
    pub base: Duration,
    /// Upper bound of a computed delay.
    pub max_delay: Duration,
    /// The longest wait before one retry: a `retry-after` beyond it is not waited for.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
            max_wait: DEFAULT_MAX_WAIT,
        }
    }
}

impl RetryPolicy {
    /// The policy for a provider: its `max_retries` and `max_retry_wait_secs`, the base delay
    /// from `PITH_RETRY_BASE_MS` if set.
    pub fn for_provider(pc: Option<&ProviderConfig>) -> Self {
        let mut p = Self::from_env(pc.and_then(|p| p.max_retries));
        if let Some(secs) = pc.and_then(|p| p.max_retry_wait_secs).filter(|s| *s > 0) {
            p.max_wait = Duration::from_secs(secs);
        }
        p
    }

    /// The default policy with `max_retries` from config if given, and the base delay from
    /// `PITH_RETRY_BASE_MS` if set (tests use ~10 ms).
    pub fn from_env(max_retries: Option<u32>) -> Self {
        Self::from_values(
            max_retries,
            std::env::var("PITH_RETRY_BASE_MS").ok().as_deref(),
        )
    }

    fn from_values(max_retries: Option<u32>, base_ms: Option<&str>) -> Self {
        let mut p = RetryPolicy::default();
        if let Some(n) = max_retries {
            p.max_retries = n;
        }
        match base_ms.map(|s| s.trim().parse::<u64>()) {
            Some(Ok(ms)) => {
                p.base = Duration::from_millis(ms);
                // Keep a small base small all the way up (tests must not wait a minute).
                p.max_delay = p.max_delay.min(p.base.saturating_mul(64));
            }
            Some(Err(_)) => {
                tracing::warn!("PITH_RETRY_BASE_MS is not a number of milliseconds; ignored")
            }
            None => {}
        }
        p
    }

    /// The wait before retry number `attempt` (1-based) after `err`, or `None` when the error is
    /// not retryable, the retries are used up, or the server asks for a longer wait than
    /// `max_wait`. A server's `retry_after` is used instead of the computed backoff; otherwise
    /// `base * 2^(attempt-1)` with ±20% jitter, capped at `max_delay` and `max_wait`.
    ///
    /// No connection at all (`unreachable`: connection refused, an unknown host) will not go
    /// away by waiting: it gets one quick retry (a server just starting), then is reported.
    pub fn delay(&self, attempt: u32, err: &ProviderError) -> Option<Duration> {
        if !err.kind.is_retryable() || attempt == 0 || attempt > self.max_retries {
            return None;
        }
        if err.unreachable {
            return (attempt == 1).then_some(self.base.min(UNREACHABLE_WAIT));
        }
        if let Some(after) = err.retry_after {
            return (after <= self.max_wait).then_some(after);
        }
        let exp = self
            .base
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1).min(31)));
        let jitter = 0.8 + fastrand::f64() * 0.4;
        let jittered = Duration::try_from_secs_f64(exp.as_secs_f64() * jitter).unwrap_or(exp);
        Some(jittered.min(self.max_delay).min(self.max_wait))
    }

    /// How many retries `err` gets at most: one for a connection that could not be made.
    pub fn retries_for(&self, err: &ProviderError) -> u32 {
        if err.unreachable {
            self.max_retries.min(1)
        } else {
            self.max_retries
        }
    }

    /// The message to report when [`delay`](Self::delay) gave up on `err` at `attempt`: the
    /// error's own, plus why it was not retried further when that is not obvious.
    pub fn final_message(&self, attempt: u32, err: &ProviderError) -> String {
        if !err.kind.is_retryable() {
            return err.message.clone();
        }
        match err.retry_after {
            Some(after) if after > self.max_wait && attempt <= self.max_retries => format!(
                "{}; the server asks to wait {} s before trying again, longer than pith waits ({} s, max_retry_wait_secs): try again later",
                err.message,
                after.as_secs_f64().ceil() as u64,
                self.max_wait.as_secs()
            ),
            _ if self.max_retries > 0 && attempt > self.max_retries => format!(
                "{} (still failing after {} retries)",
                err.message, self.max_retries
            ),
            _ => err.message.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::FaultKind;

    fn err(kind: FaultKind) -> ProviderError {
        ProviderError::new(kind, "x")
    }

    #[test]
    fn no_connection_gets_one_quick_retry() {
        let p = RetryPolicy::default();
        let mut e = err(FaultKind::Network);
        e.unreachable = true;
        assert_eq!(p.delay(1, &e), Some(UNREACHABLE_WAIT));
        assert_eq!(p.delay(2, &e), None);
        assert_eq!(p.retries_for(&e), 1);
        assert_eq!(
            p.final_message(2, &e),
            "x",
            "no 'still failing after' count"
        );
        // a stream cut mid-answer is retried as before
        let cut = err(FaultKind::Network);
        assert!(p.delay(2, &cut).is_some() && p.delay(4, &cut).is_some());
        // none at all when retries are off
        let off = RetryPolicy {
            max_retries: 0,
            ..p
        };
        assert_eq!(off.delay(1, &e), None);
    }

    #[test]
    fn defaults() {
        let p = RetryPolicy::default();
        assert_eq!(p.max_retries, 4);
        assert_eq!(p.base, Duration::from_secs(1));
        assert_eq!(p.max_delay, Duration::from_secs(60));
    }

    #[test]
    fn exponential_with_jitter_and_cap() {
        let p = RetryPolicy {
            max_retries: 10,
            base: Duration::from_millis(1000),
            max_delay: Duration::from_secs(60),
            ..RetryPolicy::default()
        };
        for _ in 0..200 {
            for attempt in 1..=5u32 {
                let d = p.delay(attempt, &err(FaultKind::Server)).unwrap();
                let nominal = 1000.0 * f64::from(1u32 << (attempt - 1));
                let ms = d.as_secs_f64() * 1000.0;
                assert!(
                    ms >= nominal * 0.8 - 0.001 && ms <= nominal * 1.2 + 0.001,
                    "attempt {attempt}: {ms}"
                );
            }
            // 2^9 s is far over the cap.
            assert_eq!(
                p.delay(10, &err(FaultKind::Network)),
                Some(Duration::from_secs(60))
            );
        }
        // The jitter actually varies.
        let samples: std::collections::HashSet<_> = (0..50)
            .map(|_| p.delay(1, &err(FaultKind::Server)).unwrap())
            .collect();
        assert!(samples.len() > 1);
    }

    #[test]
    fn gives_up_when_exhausted_or_not_retryable() {
        let p = RetryPolicy::default();
        assert!(p.delay(4, &err(FaultKind::RateLimit)).is_some());
        assert_eq!(p.delay(5, &err(FaultKind::RateLimit)), None);
        assert_eq!(p.delay(0, &err(FaultKind::RateLimit)), None);
        for kind in [
            FaultKind::ContextOverflow,
            FaultKind::Auth,
            FaultKind::BadRequest,
            FaultKind::Cancelled,
        ] {
            assert_eq!(p.delay(1, &err(kind)), None, "{kind:?}");
        }
        for kind in [
            FaultKind::RateLimit,
            FaultKind::Server,
            FaultKind::Network,
            FaultKind::Malformed,
        ] {
            assert!(p.delay(1, &err(kind)).is_some(), "{kind:?}");
        }
        let none = RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        };
        assert_eq!(none.delay(1, &err(FaultKind::Server)), None);
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_bound_then_reported() {
        let p = RetryPolicy {
            max_wait: Duration::from_secs(120),
            ..RetryPolicy::default()
        };
        let mut e = err(FaultKind::RateLimit);
        e.retry_after = Some(Duration::from_secs(90));
        // Longer than max_delay, within max_wait: honoured.
        assert_eq!(p.delay(1, &e), Some(Duration::from_secs(90)));
        e.retry_after = Some(Duration::from_millis(5));
        assert_eq!(p.delay(3, &e), Some(Duration::from_millis(5)));
        // Not past the retry budget.
        assert_eq!(p.delay(5, &e), None);
        assert_eq!(p.final_message(5, &e), "x (still failing after 4 retries)");
        // A wait past the bound is not waited for; the message says why and what to do.
        e.retry_after = Some(Duration::from_secs(999_999));
        assert_eq!(p.delay(1, &e), None);
        let m = p.final_message(1, &e);
        assert!(
            m.starts_with("x; the server asks to wait 999999 s")
                && m.contains("120 s, max_retry_wait_secs"),
            "{m}"
        );
        // The computed backoff never passes the bound either.
        let short = RetryPolicy {
            max_wait: Duration::from_secs(2),
            ..RetryPolicy::default()
        };
        assert_eq!(
            short.delay(4, &err(FaultKind::Server)),
            Some(Duration::from_secs(2))
        );
        // Errors that are not retried keep their message.
        assert_eq!(p.final_message(1, &err(FaultKind::Auth)), "x");
    }

    #[test]
    fn provider_settings() {
        let pc = ProviderConfig {
            max_retries: Some(1),
            max_retry_wait_secs: Some(7),
            ..ProviderConfig::default()
        };
        let p = RetryPolicy::for_provider(Some(&pc));
        assert_eq!(p.max_retries, 1);
        assert_eq!(p.max_wait, Duration::from_secs(7));
        let d = RetryPolicy::for_provider(None);
        assert_eq!(d.max_wait, DEFAULT_MAX_WAIT);
    }

    #[test]
    fn env_values() {
        let p = RetryPolicy::from_values(Some(2), Some("10"));
        assert_eq!(p.max_retries, 2);
        assert_eq!(p.base, Duration::from_millis(10));
        assert_eq!(p.max_delay, Duration::from_millis(640));
        let d = p.delay(2, &err(FaultKind::Server)).unwrap();
        assert!(
            d >= Duration::from_millis(16) && d <= Duration::from_millis(24),
            "{d:?}"
        );

        let p = RetryPolicy::from_values(None, Some("nope"));
        assert_eq!(p, RetryPolicy::default());
        let p = RetryPolicy::from_values(None, None);
        assert_eq!(p, RetryPolicy::default());
    }
}
