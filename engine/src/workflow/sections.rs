//! The `inputs:` and `triggers:` sections: input types and defaults, cron
//! expressions (5 or 6 fields) and IANA time zones.

use std::str::FromStr;

use super::context::Ctx;
use super::cursor::{describe, Cursor};
use super::diagnostic::suggest;
use super::file::{CatchUpFile, InputFile, InputTypeFile, OverlapFile, TriggerFile};
use super::model::{InputDef, InputType, Trigger};
use super::values::{bad_name, is_name};
use crate::schedule::{
    parse_cron as cron_schedule, CatchUp, CronTrigger, Overlap, PauseAfter, PAUSE_AFTER_MAX,
};

/// The declared inputs; `names` also holds inputs whose definition was
/// refused, so refs to them do not add a second problem.
#[derive(Debug, Default)]
pub struct Inputs {
    pub defs: Vec<InputDef>,
    pub names: Vec<String>,
}

pub fn inputs(cx: &mut Ctx, section: Option<Cursor<'_>>) -> Inputs {
    let mut out = Inputs::default();
    let Some(section) = section.filter(|s| !s.is_null()) else {
        return out;
    };
    if !section.is_map() {
        cx.error(
            &section,
            format!(
                "`inputs` is a mapping of name to {{type, default?}}, got {}",
                describe(section.node)
            ),
        );
        return out;
    }
    for (name, key_pos, c) in section.entries() {
        out.names.push(name.to_string());
        if !is_name(name) {
            cx.at(key_pos, &c.path, bad_name("input name", name));
        }
        let Some(file) = cx.deserialize::<InputFile>(&c) else {
            continue;
        };
        let ty = input_type(file.ty);
        if let Some(default) = &file.default {
            if !ty.accepts(default) {
                cx.value_error(
                    &c,
                    "default",
                    format!(
                        "default of input `{name}` must be {}, got {}",
                        type_words(ty),
                        c.key("default")
                            .map_or_else(|| default.to_string(), |d| describe(d.node))
                    ),
                );
                continue;
            }
        }
        out.defs.push(InputDef {
            name: name.to_string(),
            ty,
            required: file.default.is_none(),
            default: file.default,
            description: file.description,
        });
    }
    out
}

fn input_type(t: InputTypeFile) -> InputType {
    match t {
        InputTypeFile::String => InputType::String,
        InputTypeFile::Integer => InputType::Integer,
        InputTypeFile::Number => InputType::Number,
        InputTypeFile::Boolean => InputType::Boolean,
        InputTypeFile::Array => InputType::Array,
        InputTypeFile::Object => InputType::Object,
    }
}

fn type_words(ty: InputType) -> &'static str {
    match ty {
        InputType::String => "a string",
        InputType::Integer => "an integer",
        InputType::Number => "a number",
        InputType::Boolean => "true or false",
        InputType::Array => "a list",
        InputType::Object => "a mapping",
    }
}

pub fn triggers(cx: &mut Ctx, section: Option<Cursor<'_>>) -> Vec<Trigger> {
    let mut out = Vec::new();
    let Some(section) = section.filter(|s| !s.is_null()) else {
        return out;
    };
    if !section.is_seq() {
        cx.error(
            &section,
            format!(
                "`triggers` is a list like [{{cron: \"0 2 * * *\"}}], got {}",
                describe(section.node)
            ),
        );
        return out;
    }
    for c in section.items() {
        let Some(file) = cx.deserialize::<TriggerFile>(&c) else {
            continue;
        };
        let schedule = match cron_schedule(&file.cron) {
            Ok(s) => Some(s),
            Err(message) => {
                cx.value_error(&c, "cron", message);
                None
            }
        };
        let timezone = match file.timezone.as_deref().map(str::trim) {
            None | Some("") => Some(chrono_tz::Tz::UTC),
            Some(name) => match chrono_tz::Tz::from_str(name) {
                Ok(tz) => Some(tz),
                Err(_) => {
                    let hint = suggest(
                        name,
                        chrono_tz::TZ_VARIANTS.iter().map(|t| t.name()),
                        || "; use an IANA name such as Europe/Berlin or UTC".into(),
                    );
                    cx.value_error(&c, "timezone", format!("unknown time zone `{name}`{hint}"));
                    None
                }
            },
        };
        let mut pause_after = PauseAfter::default();
        let mut limits_ok = true;
        if let Some(limits) = file.pause_after {
            for (name, value, slot) in [
                ("failed", limits.failed, &mut pause_after.failed),
                ("partial", limits.partial, &mut pause_after.partial),
            ] {
                match value {
                    Some(n) if (1..=PAUSE_AFTER_MAX).contains(&n) => *slot = Some(n),
                    Some(n) => {
                        limits_ok = false;
                        cx.value_error(
                            &c,
                            "pause_after",
                            format!(
                                "`pause_after.{name}` is {n}: give 1 to {PAUSE_AFTER_MAX} \
                                 consecutive runs, or leave it out for no limit"
                            ),
                        );
                    }
                    None => {}
                }
            }
        }
        if let (Some(schedule), Some(timezone), true) = (schedule, timezone, limits_ok) {
            out.push(Trigger::Cron(CronTrigger {
                expression: file.cron.trim().to_string(),
                schedule,
                timezone,
                catch_up: match file.catch_up {
                    None => CatchUp::default(),
                    Some(CatchUpFile::None) => CatchUp::None,
                    Some(CatchUpFile::Last) => CatchUp::Last,
                    Some(CatchUpFile::All) => CatchUp::All,
                },
                overlap: match file.overlap {
                    None => Overlap::default(),
                    Some(OverlapFile::Skip) => Overlap::Skip,
                    Some(OverlapFile::Allow) => Overlap::Allow,
                    Some(OverlapFile::Queue) => Overlap::Queue,
                },
                pause_after,
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cron_forms() {
        assert!(cron_schedule("0 2 * * *").is_ok());
        assert!(cron_schedule("30 0 2 * * Mon-Fri").is_ok());
        assert!(cron_schedule("0 2 * *").unwrap_err().contains("4 fields"));
        assert!(cron_schedule("0 25 * * *").is_err());
    }

    #[test]
    fn default_types() {
        assert!(InputType::Integer.accepts(&json!(5)));
        assert!(!InputType::Integer.accepts(&json!(5.5)));
        assert!(InputType::Number.accepts(&json!(5)));
        assert!(!InputType::String.accepts(&json!(5)));
        assert!(InputType::Object.accepts(&json!({})));
    }
}
