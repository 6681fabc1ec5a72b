//! Where a workflow's providers' OpenAPI documents are read from. A file
//! run from the command line reads them beside the workflow file, as the
//! user wrote them. A workflow submitted to a server reads them from what
//! was uploaded with it, else from one configured folder — and never from
//! outside that folder: an absolute path, a `..` step or a symbolic link
//! leading out of it is refused with the reason.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// How `openapi:` paths of a workflow resolve.
#[derive(Debug, Clone)]
pub enum DocumentSource {
    /// Relative paths are taken from this folder (the workflow file's own);
    /// absolute paths are read as given.
    Files { base: PathBuf },
    /// Documents uploaded with the workflow (by the path it names them by),
    /// then files under `root` when one is configured; nothing else.
    Confined {
        uploaded: BTreeMap<String, String>,
        root: Option<PathBuf>,
    },
}

/// A document found: the name it is reported by and its text.
#[derive(Debug, Clone)]
pub struct FoundDocument {
    pub name: String,
    pub text: String,
}

impl DocumentSource {
    /// The text of the document `path` names, or why it cannot be read.
    pub fn read(&self, path: &str) -> Result<FoundDocument, String> {
        match self {
            DocumentSource::Files { base } => {
                let file = base.join(path);
                let name = file.display().to_string();
                std::fs::read_to_string(&file)
                    .map(|text| FoundDocument {
                        name: name.clone(),
                        text,
                    })
                    .map_err(|e| format!("{name}: cannot read the document: {e}"))
            }
            DocumentSource::Confined { uploaded, root } => {
                let relative = confined_path(path)?;
                let key = upload_key(&relative);
                if let Some(text) = find_upload(uploaded, &key, path) {
                    return Ok(FoundDocument {
                        name: key,
                        text: text.clone(),
                    });
                }
                let Some(root) = root else {
                    return Err(format!(
                        "`{path}` was not uploaded with the workflow, and this server has no \
                         workflows_dir to read documents from"
                    ));
                };
                read_under(root, &relative, &key)
            }
        }
    }

    /// Whether `path` is read from the documents uploaded with the
    /// workflow (so reading it again gives the same text), rather than
    /// from a folder that may change between two reads.
    pub fn is_uploaded(&self, path: &str) -> bool {
        match self {
            DocumentSource::Files { .. } => false,
            DocumentSource::Confined { uploaded, .. } => {
                confined_path(path).is_ok_and(|relative| {
                    find_upload(uploaded, &upload_key(&relative), path).is_some()
                })
            }
        }
    }
}

/// The name an uploaded document is stored under: its relative path with
/// `/` between names.
fn upload_key(relative: &Path) -> String {
    relative.to_string_lossy().replace('\\', "/")
}

/// The uploaded document named `key`, or `path` as written.
fn find_upload<'a>(
    uploaded: &'a BTreeMap<String, String>,
    key: &str,
    path: &str,
) -> Option<&'a String> {
    uploaded.get(key).or_else(|| uploaded.get(path))
}

/// `path` as a relative path of plain names, or why it is refused.
pub fn confined_path(path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    let mut out = PathBuf::new();
    for part in p.components() {
        match part {
            Component::Normal(name) => out.push(name),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!(
                    "`{path}` climbs out of the documents folder with `..`"
                ))
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "`{path}` is absolute; a submitted workflow names its documents relative to \
                     the documents folder"
                ))
            }
        }
    }
    if out.as_os_str().is_empty() {
        return Err("the document path is empty".to_string());
    }
    Ok(out)
}

/// Reads `relative` under `root`, refusing a file whose real path (links
/// followed) is outside the real `root`.
fn read_under(root: &Path, relative: &Path, key: &str) -> Result<FoundDocument, String> {
    let real_root = root
        .canonicalize()
        .map_err(|e| format!("the workflows_dir {} cannot be read: {e}", root.display()))?;
    let real = real_root
        .join(relative)
        .canonicalize()
        .map_err(|e| format!("cannot read `{key}` under the workflows_dir: {e}"))?;
    if !real.starts_with(&real_root) {
        return Err(format!(
            "`{key}` leads outside the workflows_dir through a symbolic link"
        ));
    }
    std::fs::read_to_string(&real)
        .map(|text| FoundDocument {
            name: key.to_string(),
            text,
        })
        .map_err(|e| format!("cannot read `{key}` under the workflows_dir: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_are_confined() {
        assert_eq!(
            confined_path("./specs/shop.yaml").ok(),
            Some(PathBuf::from("specs/shop.yaml"))
        );
        assert!(confined_path("../etc/passwd").unwrap_err().contains(".."));
        assert!(confined_path("specs/../../x").unwrap_err().contains(".."));
        assert!(confined_path("/etc/passwd")
            .unwrap_err()
            .contains("absolute"));
        assert!(confined_path("").is_err());
    }

    #[test]
    fn uploaded_documents_come_first_and_nothing_leaves_the_root() {
        let dir = std::env::temp_dir().join(format!("dragnet-docs-{}", std::process::id()));
        let root = dir.join("root");
        std::fs::create_dir_all(&root).ok();
        std::fs::write(root.join("shop.yaml"), "on disk").ok();
        std::fs::write(dir.join("secret.txt"), "outside").ok();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.join("secret.txt"), root.join("link.yaml")).ok();
        let mut uploaded = BTreeMap::new();
        uploaded.insert("shop.yaml".to_string(), "uploaded".to_string());
        let both = DocumentSource::Confined {
            uploaded,
            root: Some(root.clone()),
        };
        assert_eq!(
            both.read("./shop.yaml").map(|d| d.text).ok().as_deref(),
            Some("uploaded")
        );
        assert!(both.is_uploaded("./shop.yaml"));
        assert!(!both.is_uploaded("other.yaml"));
        let disk = DocumentSource::Confined {
            uploaded: BTreeMap::new(),
            root: Some(root.clone()),
        };
        assert_eq!(
            disk.read("shop.yaml").map(|d| d.text).ok().as_deref(),
            Some("on disk")
        );
        assert!(!disk.is_uploaded("shop.yaml"));
        assert!(disk.read("../secret.txt").unwrap_err().contains(".."));
        #[cfg(unix)]
        assert!(disk.read("link.yaml").unwrap_err().contains("outside"));
        let none = DocumentSource::Confined {
            uploaded: BTreeMap::new(),
            root: None,
        };
        assert!(none.read("shop.yaml").unwrap_err().contains("not uploaded"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
