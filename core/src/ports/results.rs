//! The result store: what an agent call produced, kept whole under a
//! [`ResultId`] for the organisation and thread that made it, until it
//! expires. A lookup names the scope it asks from, and a result of another
//! scope is [`Lookup::Unknown`] — the answer for an id that never existed —
//! so nobody learns another thread's ids exist. Only a result of the
//! asker's own scope can be [`Lookup::Expired`].
//!
//! The port is generic over `P`, what is kept beside the text for queries:
//! the gateway keeps the loop layer's payload (its items), which this
//! crate does not know.

use chrono::{DateTime, Utc};

use super::result_id::ResultId;
use super::StoreFuture;

/// Whose a stored result is: an organisation, and the thread in it (an MCP
/// session, a thread id the caller presents, or the token's subject).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultScope {
    pub org: String,
    pub thread: String,
}

/// A stored result: the call's whole text as the agent would have read
/// it, what that text is, and its payload `P` (what queries filter).
#[derive(Debug)]
pub struct StoredResult<P> {
    pub text: String,
    pub form: Form,
    pub payload: P,
}

/// What a stored result's text holds, and of which media type (what a
/// reader of it as a resource is told).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Form {
    /// Text: an answer's JSON (`application/json`), or a tool's plain
    /// words (`text/plain`).
    Text { media_type: String },
    /// Binary content (an image, audio, a blob) as its base64.
    Base64 { media_type: String },
}

impl Form {
    /// An answer's JSON.
    pub fn json() -> Form {
        Form::Text {
            media_type: "application/json".into(),
        }
    }

    /// The media type.
    pub fn media_type(&self) -> &str {
        match self {
            Form::Text { media_type } | Form::Base64 { media_type } => media_type,
        }
    }

    /// The encoding as stored beside the media type: `base64`, or none
    /// for text.
    pub fn encoding(&self) -> Option<&'static str> {
        match self {
            Form::Text { .. } => None,
            Form::Base64 { .. } => Some("base64"),
        }
    }

    /// Read back from what [`Form::media_type`] and [`Form::encoding`]
    /// stored (rows from before forms were kept are JSON); `None` for an
    /// encoding nobody wrote.
    pub fn stored(media_type: Option<String>, encoding: Option<&str>) -> Option<Form> {
        let Some(media_type) = media_type else {
            return Some(Form::json());
        };
        match encoding {
            None => Some(Form::Text { media_type }),
            Some("base64") => Some(Form::Base64 { media_type }),
            Some(_) => None,
        }
    }
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup<P> {
    Found(StoredResult<P>),
    /// The asker's own result, past its time.
    Expired {
        expired_at: DateTime<Utc>,
    },
    /// No result of that id in the asker's scope.
    Unknown,
}

/// Keeps stored results whose payload is a `P`.
pub trait ResultStore<P>: Send + Sync {
    /// Keeps `result` under `id` for `scope`, stored at `now`, until
    /// `expires_at`.
    fn put<'a>(
        &'a self,
        id: &'a ResultId,
        scope: &'a ResultScope,
        result: &'a StoredResult<P>,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> StoreFuture<'a, ()>;

    /// Result `id` as `scope` may see it at `now`.
    fn get<'a>(
        &'a self,
        id: &'a ResultId,
        scope: &'a ResultScope,
        now: DateTime<Utc>,
    ) -> StoreFuture<'a, Lookup<P>>;
}
