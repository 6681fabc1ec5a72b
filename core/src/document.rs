//! `Document`: one JSON value as shared text, known to be valid — either
//! written by this program from checked parts (a rendered result, a
//! serialized value) or checked when it came from outside (a stored run).
//! Step outputs travel as documents, so a large rendering is not parsed
//! again just to be held as JSON.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::json::JsonText;

/// One valid JSON value, cheap to clone.
#[derive(Clone, PartialEq, Eq)]
pub struct Document(Arc<str>);

impl Document {
    /// Checks `text` and keeps it.
    pub fn parse(text: String) -> Result<Document, serde_json::Error> {
        let raw = RawValue::from_string(text)?;
        Ok(Document::from(raw))
    }

    /// A value's JSON text (serializing a `Value` always gives JSON).
    pub fn from_value(value: &serde_json::Value) -> Document {
        Document(Arc::from(value.to_string()))
    }

    /// Text written from checked parts (the renderings of a result), so
    /// not parsed again. Only for text known to be one JSON value.
    pub fn written(text: String) -> Document {
        Document(Arc::from(text))
    }

    pub fn get(&self) -> &str {
        &self.0
    }
}

impl From<Box<RawValue>> for Document {
    fn from(raw: Box<RawValue>) -> Document {
        Document(Arc::from(String::from(raw.get())))
    }
}

impl AsRef<[u8]> for Document {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl JsonText for Document {
    fn json(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Document({})", self.0)
    }
}

impl Serialize for Document {
    /// Written as the JSON it holds (checked on the way: serializing a
    /// record is rare and never on a run's path).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw: &RawValue = serde_json::from_str(&self.0).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Document {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(d).map(Document::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn documents_round_trip_as_the_json_they_hold() {
        let doc = Document::parse(r#"{"a":[1,2]}"#.to_string()).unwrap();
        assert_eq!(doc.get(), r#"{"a":[1,2]}"#);
        assert!(Document::parse("{".to_string()).is_err());
        let wrapped = serde_json::to_string(&json!({"x": 1})).unwrap();
        assert_eq!(Document::from_value(&json!({"x": 1})).get(), wrapped);
        #[derive(Serialize, Deserialize)]
        struct Holder {
            output: Document,
        }
        let text = serde_json::to_string(&Holder {
            output: doc.clone(),
        })
        .unwrap();
        assert_eq!(text, r#"{"output":{"a":[1,2]}}"#);
        let back: Holder = serde_json::from_str(&text).unwrap();
        assert_eq!(back.output, doc);
    }
}
