//! An upstream MCP server's tools as loop-layer `Tool`s, and its answers as
//! pages. A tool is walkable by the same detection OpenAPI tools get, from
//! its input schema (every argument is top-level, there is no wire
//! location beyond "argument"). An answer's page is its `structuredContent`
//! when there is one, else its text content: JSON text as is, any other
//! text as one JSON string (cut by characters like any answer without a
//! collection).

use dragnet_core::paging::detect;
use dragnet_core::tool::Method;
use dragnet_core::Tool;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

/// The loop-layer tool of an upstream MCP tool.
pub fn tool_of(mcp: &rmcp::model::Tool) -> Tool {
    let mut schema: Map<String, Value> = mcp.input_schema.as_ref().clone();
    schema.insert("type".into(), Value::String("object".into()));
    let input_schema = Value::Object(schema);
    let walkability = detect::detect(&input_schema, &|_| Some("argument"), false);
    Tool {
        name: mcp.name.to_string(),
        description: mcp.description.as_deref().unwrap_or_default().to_string(),
        method: Method::Post,
        path: String::new(),
        params: Vec::new(),
        body: None,
        input_schema,
        response_items_path: None,
        response_is_resource: false,
        cursor: None,
        walkability,
    }
}

/// An answer as the loop layer reads a response: its page (see
/// [`page_of`]) as a 200, or `ByteBound` when the page is longer than
/// `max_bytes`.
pub fn response_of(
    result: &CallToolResult,
    max_bytes: u64,
) -> Result<dragnet_http::RawResponse, dragnet_core::UpstreamError> {
    let body = page_of(result);
    if body.len() as u64 > max_bytes {
        return Err(dragnet_core::UpstreamError::ByteBound {
            read: body.len() as u64,
        });
    }
    Ok(dragnet_http::RawResponse {
        status: 200,
        retry_after: None,
        rate_limit: None,
        next_link: None,
        body: body.into(),
    })
}

/// The page an answer carries, as JSON bytes.
pub fn page_of(result: &CallToolResult) -> Vec<u8> {
    if let Some(structured) = &result.structured_content {
        return serde_json::to_vec(structured).unwrap_or_default();
    }
    let text: String = result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let trimmed = text.trim();
    match serde_json::from_str::<serde::de::IgnoredAny>(trimmed) {
        Ok(_) if !trimmed.is_empty() => trimmed.as_bytes().to_vec(),
        _ => serde_json::to_vec(&Value::String(text)).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn mcp_tool(schema: Value) -> rmcp::model::Tool {
        let Value::Object(o) = schema else {
            panic!("an object")
        };
        rmcp::model::Tool::new("list_tickets", "Lists tickets.", Arc::new(o))
    }

    #[test]
    fn paging_arguments_make_an_upstream_tool_walkable() {
        let walkable = tool_of(&mcp_tool(json!({
            "type": "object",
            "properties": {"page": {"type": "integer"}, "per_page": {"type": "integer"}}
        })));
        assert!(walkable.walkability.is_walkable());
        let plain = tool_of(&mcp_tool(json!({"properties": {"q": {"type": "string"}}})));
        assert!(!plain.walkability.is_walkable());
        assert_eq!(plain.input_schema["type"], "object");
    }

    #[test]
    fn a_page_is_the_structured_content_else_json_text_else_a_string() {
        let mut structured = CallToolResult::success(vec![ContentBlock::text("ignored")]);
        structured.structured_content = Some(json!({"items": [1, 2]}));
        assert_eq!(page_of(&structured), br#"{"items":[1,2]}"#);
        let json_text = CallToolResult::success(vec![ContentBlock::text(" [1, 2] ")]);
        assert_eq!(page_of(&json_text), b"[1, 2]");
        let prose = CallToolResult::success(vec![ContentBlock::text("no rows")]);
        assert_eq!(page_of(&prose), br#""no rows""#);
    }
}
