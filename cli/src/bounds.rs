//! The bound flags `call` and `run` share. A flag given overrides the
//! configuration's `[limits]`, which overrides the defaults; the result is
//! checked once by `Limits::validate`, and an error names the flag.

use std::time::Duration;

use dragnet_core::budget::Bound;
use dragnet_core::Limits;

use crate::failure::CliError;

#[derive(Debug, Default, Clone, clap::Args)]
pub struct LimitFlags {
    /// Bound: pages per collection, 1 to 100000 (default: the configuration's [limits], else 20).
    #[arg(long, value_name = "N")]
    pub max_pages: Option<u32>,
    /// Bound: requests per call, retries included, 1 to 1000000 (default: configuration, else 60).
    #[arg(long, value_name = "N")]
    pub max_requests: Option<u32>,
    /// Bound: items per call, 1 to 10000000 (default: configuration, else 5000).
    #[arg(long, value_name = "N")]
    pub max_items: Option<usize>,
    /// Bound: raw upstream bytes per call, 1 to 17179869184 (default: configuration, else 24000000).
    #[arg(long, value_name = "BYTES")]
    pub max_bytes: Option<u64>,
    /// Bound: wall-clock seconds per call, 1 to 86400 (default: configuration, else 60).
    #[arg(long, value_name = "SECONDS")]
    pub max_seconds: Option<u64>,
    /// Bound: values of one fan-out, 1 to 100000 (default: configuration, else 50).
    #[arg(long, value_name = "N")]
    pub max_for_each_values: Option<usize>,
}

impl LimitFlags {
    /// `base` (the configuration's limits) with the flags given applied, checked.
    pub fn apply(&self, base: &Limits) -> Result<Limits, CliError> {
        let limits = Limits {
            max_pages: self.max_pages.unwrap_or(base.max_pages),
            max_requests: self.max_requests.unwrap_or(base.max_requests),
            max_items: self.max_items.unwrap_or(base.max_items),
            max_bytes: self.max_bytes.unwrap_or(base.max_bytes),
            wall_clock: self
                .max_seconds
                .map_or(base.wall_clock, Duration::from_secs),
            max_for_each_values: self.max_for_each_values.unwrap_or(base.max_for_each_values),
            retry: base.retry.clone(),
        };
        limits.validate().map_err(|source| {
            let (argument, value) = match source.bound {
                Bound::Pages => ("--max-pages", shown(self.max_pages)),
                Bound::Requests => ("--max-requests", shown(self.max_requests)),
                Bound::Items => ("--max-items", shown(self.max_items)),
                Bound::Bytes => ("--max-bytes", shown(self.max_bytes)),
                Bound::WallClock => ("--max-seconds", shown(self.max_seconds)),
                Bound::ForEachValues => ("--max-for-each-values", shown(self.max_for_each_values)),
                // Not flags: the configuration's values, which were checked.
                Bound::Retries | Bound::BaseBackoff | Bound::MaxBackoff => {
                    ("limits", String::new())
                }
            };
            CliError::Limit {
                argument,
                value,
                source,
            }
        })?;
        Ok(limits)
    }
}

fn shown<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map(|v| format!(" {v}")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_configuration_and_are_checked() {
        let base = Limits {
            max_pages: 7,
            ..Limits::default()
        };
        let flags = LimitFlags {
            max_requests: Some(9),
            ..LimitFlags::default()
        };
        let l = flags.apply(&base).unwrap();
        assert_eq!((l.max_pages, l.max_requests), (7, 9));
        let flags = LimitFlags {
            max_seconds: Some(u64::MAX),
            ..LimitFlags::default()
        };
        let e = flags.apply(&base).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--max-seconds 18446744073709551615: limit `wall_clock` is 18446744073709551615 s; it must be from 1 ms to 24 h"
        );
        assert_eq!(e.argument(), "--max-seconds");
    }
}
