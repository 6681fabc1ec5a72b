//! Paging as a tool declares it: which parameters size and position a page
//! ([`detect::Paging`], [`detect::Walkability`]), a cursor's next value and
//! where it comes from ([`cursor::CursorPaging`]), and the names of
//! collection and metadata keys ([`keys`]). Detection reads a tool's input
//! schema, so an OpenAPI operation and an MCP tool are walked alike.

pub mod cursor;
pub mod detect;
pub mod keys;
