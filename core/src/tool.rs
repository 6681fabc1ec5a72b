//! The tool model: one callable operation of a provider, as the importer
//! produced it, with everything the loop layer needs to call and walk it.

use std::collections::HashMap;

use serde_json::Value;

use crate::paging::detect::{Paging, Walkability};

/// HTTP method of an operation. Closed: OpenAPI allows no others.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Get,
    Put,
    Post,
    Delete,
    Options,
    Head,
    Patch,
    Trace,
}

impl Method {
    pub const ALL: [Method; 8] = [
        Method::Get,
        Method::Put,
        Method::Post,
        Method::Delete,
        Method::Options,
        Method::Head,
        Method::Patch,
        Method::Trace,
    ];

    /// The lower-case key OpenAPI uses under a path item.
    pub fn key(self) -> &'static str {
        match self {
            Method::Get => "get",
            Method::Put => "put",
            Method::Post => "post",
            Method::Delete => "delete",
            Method::Options => "options",
            Method::Head => "head",
            Method::Patch => "patch",
            Method::Trace => "trace",
        }
    }

    pub fn as_upper(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Put => "PUT",
            Method::Post => "POST",
            Method::Delete => "DELETE",
            Method::Options => "OPTIONS",
            Method::Head => "HEAD",
            Method::Patch => "PATCH",
            Method::Trace => "TRACE",
        }
    }
}

/// Where a non-body parameter goes in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamLocation {
    Path,
    Query,
    Header,
}

impl ParamLocation {
    pub fn as_str(self) -> &'static str {
        match self {
            ParamLocation::Path => "path",
            ParamLocation::Query => "query",
            ParamLocation::Header => "header",
        }
    }
}

/// A path, query or header parameter. Its argument has the same name.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub location: ParamLocation,
    pub required: bool,
    /// JSON Schema of the value, `$ref`s resolved.
    pub schema: Value,
}

/// How a request body is encoded on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyEncoding {
    Json,
    Form,
}

/// How a body's arguments appear in the tool's input schema.
#[derive(Debug, Clone, PartialEq)]
pub enum BodyArguments {
    /// Each property of the (object) body schema is a top-level argument.
    Flattened { properties: Vec<String> },
    /// The whole body is one argument named `body`.
    Whole,
}

/// The request body of an operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    pub encoding: BodyEncoding,
    pub required: bool,
    /// JSON Schema of the body, `$ref`s resolved.
    pub schema: Value,
    pub arguments: BodyArguments,
}

/// One callable operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// Unique within its toolkit, `^[A-Za-z0-9_-]{1,64}$`.
    pub name: String,
    pub description: String,
    pub method: Method,
    /// Path template relative to the base URL, e.g. `/orders/{id}`.
    pub path: String,
    pub params: Vec<Param>,
    pub body: Option<Body>,
    /// JSON Schema of the arguments; always `"type": "object"`.
    pub input_schema: Value,
    /// Dot-path of the array the 2xx response schema declares, if any
    /// (empty for a top-level array).
    pub response_items_path: Option<Vec<String>>,
    /// The 2xx response schema declares a single resource (an object with
    /// properties and no collection): its response is returned whole.
    pub response_is_resource: bool,
    /// Whether and how the tool can be walked (SPEC §3.1).
    pub walkability: Walkability,
    /// How it pages by cursor or next link, when it does and page-number
    /// or offset paging does not apply (detected, not walked yet).
    pub cursor: Option<crate::paging::cursor::CursorPaging>,
}

impl Tool {
    /// Whether `_all_pages` walks it: by page number or offset, or by a
    /// cursor read from the body or the last item.
    pub fn can_walk(&self) -> bool {
        self.walkability.is_walkable() || self.cursor_walk().is_some()
    }

    /// Its cursor paging, when that is how it is walked.
    pub fn cursor_walk(&self) -> Option<&crate::paging::cursor::CursorPaging> {
        use crate::paging::cursor::NextSource;
        if self.walkability.is_walkable() {
            return None;
        }
        // A cursor needs a parameter to go in; a next URL is followed as it is.
        self.cursor.as_ref().filter(|c| match c.next {
            NextSource::Body(_) | NextSource::LastItem { .. } => c.param.is_some(),
            NextSource::NextUrl(_) | NextSource::LinkHeader => true,
        })
    }

    /// The paging parameters when the tool is walkable.
    pub fn paging(&self) -> Option<&Paging> {
        match &self.walkability {
            Walkability::Walkable(paging) => Some(paging),
            _ => None,
        }
    }

    /// Names of every top-level argument, in schema order.
    pub fn argument_names(&self) -> Vec<String> {
        match self
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
        {
            Some(props) => props.keys().cloned().collect(),
            None => Vec::new(),
        }
    }

    /// Names of the arguments the input schema requires.
    pub fn required_arguments(&self) -> Vec<&str> {
        self.input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// The schema of one top-level argument.
    pub fn argument_schema(&self, name: &str) -> Option<&Value> {
        self.input_schema.get("properties")?.get(name)
    }

    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }
}

/// All the tools of one OpenAPI document.
#[derive(Debug, Clone)]
pub struct Toolkit {
    /// Where the document came from (a file path), for messages.
    pub source: String,
    pub title: String,
    pub tools: Vec<Tool>,
    /// The `operationId` each tool was imported from, as the document
    /// wrote it (trimmed), by tool name; tools named by method and path
    /// have none.
    pub operation_ids: HashMap<String, String>,
}

impl Toolkit {
    /// The tool called `name`, else the one tool whose original
    /// `operationId` is `name` (an id the document gives several operations
    /// names none of them: their distinct tool names do).
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        if let Some(tool) = self.tools.iter().find(|t| t.name == name) {
            return Some(tool);
        }
        let mut by_id = self
            .tools
            .iter()
            .filter(|t| self.operation_id(&t.name) == Some(name));
        match (by_id.next(), by_id.next()) {
            (Some(tool), None) => Some(tool),
            _ => None,
        }
    }

    /// The original `operationId` of the tool called `name`, if it had one.
    pub fn operation_id(&self, name: &str) -> Option<&str> {
        self.operation_ids.get(name).map(String::as_str)
    }
}
