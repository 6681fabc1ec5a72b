//! Stored results in MCP's words: the `resource_link` an answer that was
//! stored carries, the one resource template (`dragnet://results/{resultId}`),
//! and what `resources/read` returns — text (an answer's JSON as
//! `application/json`, a tool's words as `text/plain`) or a blob (binary
//! content too large to pass, as base64 with its own media type).

use dragnet_core::Form;
use rmcp::model::{ContentBlock, ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

use crate::results::{ResultLink, StoredResult, RESOURCE_PREFIX};

/// The link an answer carries to the result it was stored as.
pub(crate) fn link(stored: &ResultLink) -> ContentBlock {
    let mut resource = Resource::new(stored.uri(), stored.id.to_string());
    resource.description = Some(
        "The whole answer, stored for 15 minutes for this thread: read it as a resource, or \
         with queryToolResult / fetchToolResult."
            .into(),
    );
    resource.mime_type = Some(stored.media_type.clone());
    resource.size = Some(stored.bytes as u64);
    ContentBlock::resource_link(resource)
}

/// A `resource_link` block in words, for a caller whose protocol predates
/// links (before 2025-06-18); any other block as it is.
pub(super) fn as_text(block: ContentBlock) -> ContentBlock {
    let ContentBlock::ResourceLink(link) = block else {
        return block;
    };
    let mut words = format!("[Resource link: {} <{}>", link.name, link.uri);
    if let Some(media_type) = &link.mime_type {
        words.push_str(&format!(", {media_type}"));
    }
    if let Some(size) = link.size {
        words.push_str(&format!(", {size} bytes"));
    }
    if let Some(description) = &link.description {
        words.push_str(&format!(": {description}"));
    }
    words.push(']');
    ContentBlock::text(words)
}

/// The template every stored result's URI follows.
pub(super) fn template() -> ResourceTemplate {
    ResourceTemplate::new(format!("{RESOURCE_PREFIX}{{resultId}}"), "stored result")
        .with_title("A stored result")
        .with_description(
            "A cut answer or a complete walk, kept 15 minutes under its _resultId for the \
             thread that made it.",
        )
}

/// What `resources/read` of `uri` answers.
pub(super) fn contents(uri: &str, stored: StoredResult) -> ReadResourceResult {
    let contents = match stored.form {
        Form::Text { media_type } => ResourceContents::TextResourceContents {
            uri: uri.to_string(),
            mime_type: Some(media_type),
            text: stored.text,
            meta: None,
        },
        Form::Base64 { media_type } => ResourceContents::BlobResourceContents {
            uri: uri.to_string(),
            mime_type: Some(media_type),
            blob: stored.text,
            meta: None,
        },
    };
    ReadResourceResult::new(vec![contents])
}

#[cfg(test)]
mod tests {
    use dragnet_core::ResultId;

    use super::*;

    #[test]
    fn a_link_reads_as_words_for_an_older_caller_and_other_blocks_pass() {
        let id = ResultId::new();
        let stored = ResultLink {
            id: id.clone(),
            bytes: 7685,
            media_type: "application/json".into(),
        };
        let ContentBlock::Text(words) = as_text(link(&stored)) else {
            panic!("a link becomes text");
        };
        let expected = format!(
            "[Resource link: {id} <dragnet://results/{id}>, application/json, 7685 bytes: "
        );
        assert!(words.text.starts_with(&expected), "{}", words.text);
        let image = ContentBlock::image("iVBORw0K", "image/png");
        assert_eq!(as_text(image.clone()), image);
    }
}
