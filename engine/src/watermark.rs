//! Watermarks of incremental walks (issue 25 §1): the largest value of a
//! step's field among the rows a walk read, and the value the next walk
//! asks from. Values compare on one [`Scale`], decided once per step from
//! its `initial` value and checked for every row:
//! - [`Scale::Time`] (a string `initial`): RFC 3339 with an offset,
//!   the same without one (read as UTC), or a date (midnight UTC); a
//!   number is epoch seconds, or milliseconds from 10^11 on (3 March 1973
//!   in milliseconds, year 5138 in seconds);
//! - [`Scale::Number`] (a number `initial`): numbers, exactly for integers.
//!
//! A watermark keeps the form its value came in ([`Form`]), so the value
//! passed back to the API (less the lag) is written the way the API wrote
//! it: an offset time as RFC 3339 in UTC, a time without one without one,
//! epoch seconds as seconds.

use std::cmp::Ordering;

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat, Utc};
use dragnet_core::ports::{BoxFuture, Error as PortError};
use serde_json::Value;

/// A stored watermark: the highest value of a step's field a complete
/// walk read, with the keys of the rows read at it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredWatermark {
    /// As the API wrote it.
    pub value: Value,
    pub scale: Scale,
    /// The keys of the rows read at `value` (for `dedupe_by`), sorted.
    pub row_keys: Vec<String>,
    /// The run that moved it there.
    pub run_id: String,
    pub updated_at: DateTime<Utc>,
}

/// Where a run reads its steps' watermarks: its team's on a server, the
/// local store's for `dragnet run`.
pub trait WatermarkSource: Send + Sync {
    /// The watermark of `workflow`'s step `step`, if a walk set one.
    fn watermark<'a>(
        &'a self,
        workflow: &'a str,
        step: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredWatermark>, PortError>>;
}

/// A complete incremental walk's new watermark. It travels with the
/// step's record and is stored only after that record is (so a run whose
/// rows were never written does not move it).
#[derive(Debug, Clone, PartialEq)]
pub struct WatermarkMove {
    pub workflow: String,
    pub step: String,
    pub to: StoredWatermark,
}

/// How a step's watermark values compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Time,
    Number,
}

impl Scale {
    /// The scale an `initial` value sets: a string is a time, a number a
    /// number; anything else, or a string that is no time, is refused.
    pub fn of_initial(initial: &Value) -> Result<Scale, WatermarkError> {
        match initial {
            Value::String(_) => Watermark::read(initial, Scale::Time).map(|_| Scale::Time),
            Value::Number(_) => Ok(Scale::Number),
            other => Err(WatermarkError::new(other, Scale::Time)),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scale::Time => "a time (RFC 3339, a date, or epoch seconds or milliseconds)",
            Scale::Number => "a number",
        }
    }

    /// The name it is stored by.
    pub fn name(self) -> &'static str {
        match self {
            Scale::Time => "time",
            Scale::Number => "number",
        }
    }

    /// The scale [`Scale::name`] names.
    pub fn named(name: &str) -> Option<Scale> {
        [Scale::Time, Scale::Number]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// A value on its scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mark {
    At(DateTime<Utc>),
    Integer(i128),
    Real(f64),
}

impl Mark {
    /// The order of two marks of one scale (a time is before any number,
    /// which one scale never mixes).
    pub fn compare(&self, other: &Mark) -> Ordering {
        match (self, other) {
            (Mark::At(a), Mark::At(b)) => a.cmp(b),
            (Mark::Integer(a), Mark::Integer(b)) => a.cmp(b),
            (Mark::At(_), _) => Ordering::Less,
            (_, Mark::At(_)) => Ordering::Greater,
            (a, b) => a.real().total_cmp(&b.real()),
        }
    }

    fn real(&self) -> f64 {
        match self {
            Mark::Integer(n) => *n as f64,
            Mark::Real(x) => *x,
            Mark::At(t) => t.timestamp_millis() as f64,
        }
    }
}

/// The form a value came in, which a value derived from it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// RFC 3339 with an offset (written back in UTC, `Z`).
    Offset,
    /// A date and time without an offset.
    Naive,
    /// A date alone.
    Date,
    EpochSeconds,
    EpochMillis,
    /// A number on the number scale.
    Number,
}

/// Epoch numbers from here on are milliseconds.
const MILLIS_FROM: i128 = 100_000_000_000;

/// A watermark: a value on its scale, in the form it came in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Watermark {
    pub mark: Mark,
    pub form: Form,
}

impl Watermark {
    /// `value` read on `scale`.
    pub fn read(value: &Value, scale: Scale) -> Result<Watermark, WatermarkError> {
        let refused = || WatermarkError::new(value, scale);
        match (scale, value) {
            (Scale::Time, Value::String(text)) => time_of(text.trim()).ok_or_else(refused),
            (Scale::Time, Value::Number(n)) => {
                let n = n.as_i64().map(i128::from).ok_or_else(refused)?;
                let (millis, form) = match n.abs() >= MILLIS_FROM {
                    true => (n, Form::EpochMillis),
                    false => (n * 1000, Form::EpochSeconds),
                };
                let at = i64::try_from(millis)
                    .ok()
                    .and_then(DateTime::from_timestamp_millis)
                    .ok_or_else(refused)?;
                Ok(Watermark {
                    mark: Mark::At(at),
                    form,
                })
            }
            (Scale::Number, Value::Number(n)) => {
                let mark = match (n.as_i64(), n.as_u64(), n.as_f64()) {
                    (Some(i), _, _) => Mark::Integer(i128::from(i)),
                    (None, Some(u), _) => Mark::Integer(i128::from(u)),
                    (None, None, Some(x)) if x.is_finite() => Mark::Real(x),
                    _ => return Err(refused()),
                };
                Ok(Watermark {
                    mark,
                    form: Form::Number,
                })
            }
            _ => Err(refused()),
        }
    }

    /// The highest of `values` on `scale` (`None` for none); the first
    /// value that is not on the scale is the error.
    pub fn highest<'a>(
        values: impl IntoIterator<Item = &'a Value>,
        scale: Scale,
    ) -> Result<Option<Watermark>, WatermarkError> {
        let mut best: Option<Watermark> = None;
        for value in values {
            let seen = Watermark::read(value, scale)?;
            if best.is_none_or(|b| seen.mark.compare(&b.mark) == Ordering::Greater) {
                best = Some(seen);
            }
        }
        Ok(best)
    }

    /// This watermark less `lag`: a duration on the time scale, a number
    /// on the number scale.
    pub fn less(&self, lag: Lag) -> Watermark {
        let mark = match (self.mark, lag) {
            (Mark::At(t), Lag::Time(d)) => Mark::At(t - d),
            (Mark::Integer(n), Lag::Number(l)) if l.fract() == 0.0 => Mark::Integer(n - l as i128),
            (Mark::Integer(n), Lag::Number(l)) => Mark::Real(n as f64 - l),
            (Mark::Real(x), Lag::Number(l)) => Mark::Real(x - l),
            (mark, _) => mark,
        };
        Watermark {
            mark,
            form: self.form,
        }
    }

    /// The value as JSON, in its form.
    pub fn to_json(&self) -> Value {
        match (self.mark, self.form) {
            (Mark::At(t), Form::Offset) => {
                Value::String(t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
            }
            (Mark::At(t), Form::Naive) => {
                let text = t.naive_utc().format("%Y-%m-%dT%H:%M:%S%.f").to_string();
                Value::String(text)
            }
            (Mark::At(t), Form::Date) => Value::String(t.format("%Y-%m-%d").to_string()),
            (Mark::At(t), Form::EpochSeconds) => Value::from(t.timestamp()),
            (Mark::At(t), _) => Value::from(t.timestamp_millis()),
            (Mark::Integer(n), _) => match i64::try_from(n) {
                Ok(n) => Value::from(n),
                Err(_) => Value::from(n as f64),
            },
            (Mark::Real(x), _) => Value::from(x),
        }
    }
}

/// How far before the watermark the next walk asks from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lag {
    Time(chrono::Duration),
    Number(f64),
}

/// A time in one of the forms the time scale reads.
fn time_of(text: &str) -> Option<Watermark> {
    let at = |mark, form| Some(Watermark { mark, form });
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return at(Mark::At(t.with_timezone(&Utc)), Form::Offset);
    }
    for pattern in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, pattern) {
            return at(Mark::At(t.and_utc()), Form::Naive);
        }
    }
    let date = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?;
    at(Mark::At(date.and_hms_opt(0, 0, 0)?.and_utc()), Form::Date)
}

/// A value not on the step's scale.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the watermark field holds {value}, which is not {}", .scale.as_str())]
pub struct WatermarkError {
    /// The value, cut to 80 characters.
    pub value: String,
    pub scale: Scale,
}

impl WatermarkError {
    fn new(value: &Value, scale: Scale) -> WatermarkError {
        let text = value.to_string();
        let value = match text.chars().count() > 80 {
            true => format!("{}…", text.chars().take(80).collect::<String>()),
            false => text,
        };
        WatermarkError { value, scale }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn time(v: Value) -> Watermark {
        Watermark::read(&v, Scale::Time).unwrap()
    }

    #[test]
    fn times_in_every_form_compare_as_instants_and_keep_their_form() {
        let offset = time(json!("2026-03-01T10:00:00+01:00"));
        let naive = time(json!("2026-03-01 09:30:00"));
        let date = time(json!("2026-03-01"));
        let seconds = time(json!(1_772_359_200)); // 2026-03-01T10:00:00Z
        let millis = time(json!(1_772_359_200_500_i64));
        let order = [date, offset, naive, seconds, millis];
        for pair in order.windows(2) {
            assert_eq!(
                pair[0].mark.compare(&pair[1].mark),
                Ordering::Less,
                "{pair:?}"
            );
        }
        assert_eq!(offset.to_json(), json!("2026-03-01T09:00:00Z"));
        assert_eq!(naive.to_json(), json!("2026-03-01T09:30:00"));
        assert_eq!(date.to_json(), json!("2026-03-01"));
        assert_eq!(seconds.to_json(), json!(1_772_359_200));
        assert_eq!(millis.to_json(), json!(1_772_359_200_500_i64));
    }

    #[test]
    fn the_highest_less_its_lag_is_written_as_the_api_wrote_it() {
        let rows = [
            json!("2026-01-02T00:00:00Z"),
            json!("2026-01-03T12:00:00Z"),
            json!("2026-01-01"),
        ];
        let high = Watermark::highest(&rows, Scale::Time).unwrap().unwrap();
        assert_eq!(high.to_json(), json!("2026-01-03T12:00:00Z"));
        let asked = high.less(Lag::Time(chrono::Duration::minutes(5)));
        assert_eq!(asked.to_json(), json!("2026-01-03T11:55:00Z"));
        let ids = [json!(7), json!(9_007_199_254_740_993_u64), json!(12)];
        let high = Watermark::highest(&ids, Scale::Number).unwrap().unwrap();
        assert_eq!(high.to_json(), json!(9_007_199_254_740_993_u64));
        assert_eq!(
            high.less(Lag::Number(3.0)).to_json(),
            json!(9_007_199_254_740_990_u64)
        );
        assert_eq!(Watermark::highest(&[], Scale::Time).unwrap(), None);
    }

    #[test]
    fn a_value_off_the_scale_is_refused_naming_it() {
        let e = Watermark::highest(&[json!("2026-01-01"), json!("yesterday")], Scale::Time);
        assert_eq!(e.unwrap_err().value, "\"yesterday\"");
        assert!(Watermark::read(&json!("2026-01-01"), Scale::Number).is_err());
        assert!(Watermark::read(&json!(null), Scale::Time).is_err());
        assert_eq!(
            Scale::of_initial(&json!("2026-01-01T00:00:00Z")),
            Ok(Scale::Time)
        );
        assert_eq!(Scale::of_initial(&json!(0)), Ok(Scale::Number));
        assert!(Scale::of_initial(&json!("soon")).is_err());
        let long = Watermark::read(&json!("x".repeat(500)), Scale::Time).unwrap_err();
        assert!(long.value.chars().count() <= 81, "{}", long.value);
    }
}
