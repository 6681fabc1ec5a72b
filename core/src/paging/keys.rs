//! The names that mark a response's collection and its metadata, shared by
//! the importer (which reads them in response schemas) and the walk (which
//! finds the collection in answers).

/// Keys that name a collection, at the top level or one level down.
pub const COLLECTION_KEYS: [&str; 16] = [
    "data",
    "items",
    "results",
    "records",
    "entries",
    "rows",
    "values",
    "value",
    "content",
    "objects",
    "elements",
    "nodes",
    "hits",
    "resources",
    "Resources",
    "list",
];

/// Keys that never hold the collection.
pub const METADATA_KEYS: [&str; 8] = [
    "meta",
    "metadata",
    "pagination",
    "paging",
    "links",
    "_links",
    "included",
    "errors",
];
