//! The `data/` file view's own data: free files (what an Architect agent or the writer keeps
//! under `plans/` and `notes/`: outlines, plans, task lists), and the sandbox that resolves
//! every path of the view ([`path`]).
//!
//! The view shows the project as a tree: `manuscripts/NN-<slug>.md` (the chapters),
//! `bible/<kind>/<id>.json` (the story bible) and the free files. Chapters and the bible
//! live in [`crate::project`] and [`crate::bible`]; only the free files live here, in
//! [`Files`]: each keeps its content, its modification time (ms, from the injected clock)
//! and its origin (`human` for the writer, `agent:<name>` for an agent, `import`).
//! Folders are implicit: a folder exists while a file lies under it.
//!
//! [`diff`] turns a whole new text into a small change set, so that writing a chapter file
//! lands as an edit of what changed only.

pub mod diff;
pub mod path;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::commands::{FileSet, FileState, Origin};

/// The largest free file accepted, in bytes (1 MiB).
pub const MAX_FILE_BYTES: usize = 1024 * 1024;
/// The most free files a project keeps.
pub const MAX_FILES: usize = 1_000;

/// One free file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FreeFile {
    /// Its path relative to `data/` (such as `plans/outline.md`).
    pub path: String,
    /// Its text.
    pub content: String,
    /// When it was last written (ms).
    pub mod_time: u64,
    /// Who wrote it last: `human`, `agent:<name>` or `import`.
    pub origin: String,
}

impl FreeFile {
    /// Its size in bytes (UTF-8).
    pub fn size(&self) -> usize {
        self.content.len()
    }

    /// The file as the undo history keeps it (without its path).
    pub fn state(&self) -> FileState {
        FileState {
            content: self.content.clone(),
            mod_time: self.mod_time,
            origin: self.origin.clone(),
        }
    }

    /// Whether it is exactly `state` (its text, time and origin).
    pub fn is(&self, state: &FileState) -> bool {
        self.content == state.content
            && self.mod_time == state.mod_time
            && self.origin == state.origin
    }
}

/// The origin recorded on a free file written by `origin`: `human` for the writer,
/// `agent:<name>` for an agent, `import` for an import.
pub fn file_origin(origin: &Origin) -> String {
    match origin {
        Origin::User => "human".into(),
        Origin::Agent(name) => format!("agent:{name}"),
        Origin::Import => "import".into(),
        Origin::Remote(name) => format!("remote:{name}"),
    }
}

/// The store key of a free file of `project`: `<project>/<path>`.
pub fn file_key(project: &str, path: &str) -> String {
    format!("{project}/{path}")
}

/// Why a free file could not be written. Nothing changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilesError {
    /// The path is a folder (other files lie under it).
    #[error(
        "'{0}' is a folder (files lie under it); write a file inside it or choose another name"
    )]
    IsFolder(String),
    /// A parent of the path is a file.
    #[error("'{parent}' is a file, so '{path}' cannot be created under it; choose another folder")]
    ParentIsFile {
        /// The path asked for.
        path: String,
        /// The parent that is a file.
        parent: String,
    },
    /// The content is too large.
    #[error("the content is {0} bytes; a file under plans/ or notes/ holds at most {MAX_FILE_BYTES} bytes (split it into several files)")]
    TooLarge(usize),
    /// There are too many files.
    #[error("the project already has {MAX_FILES} files under plans/ and notes/; overwrite one instead of adding another")]
    TooMany,
}

/// An entry of a folder listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listed<'a> {
    /// A file directly in the folder.
    File(&'a FreeFile),
    /// A subfolder: its name, the bytes and newest time of the files under it.
    Folder {
        /// Its name (one segment).
        name: String,
        /// Total bytes of the files under it.
        size: usize,
        /// The newest modification time under it.
        mod_time: u64,
    },
}

/// A project's free files, by path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Files {
    /// At most [`MAX_FILES`] (and the ones loaded), by path.
    files: std::collections::BTreeMap<String, FreeFile>,
}

impl Files {
    /// No files.
    pub fn new() -> Self {
        Self::default()
    }

    /// Files loaded from the store or an export.
    pub fn from_files(files: impl IntoIterator<Item = FreeFile>) -> Self {
        Self {
            files: files
                .into_iter()
                .map(|file| (file.path.clone(), file))
                .collect(),
        }
    }

    /// The file at `path`.
    pub fn get(&self, path: &str) -> Option<&FreeFile> {
        self.files.get(path)
    }

    /// Every file, by path.
    pub fn all(&self) -> impl Iterator<Item = &FreeFile> {
        self.files.values()
    }

    /// How many files there are.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The files under folder `dir` (at any depth), by path.
    pub fn under<'a>(&'a self, dir: &str) -> impl Iterator<Item = &'a FreeFile> + 'a {
        let prefix = format!("{dir}/");
        let from = (
            std::ops::Bound::Included(prefix.as_str()),
            std::ops::Bound::Unbounded,
        );
        self.files
            .range::<str, _>(from)
            .take_while(move |(p, _)| p.starts_with(&prefix))
            .map(|(_, f)| f)
    }

    /// Whether `dir` is a folder: a file lies under it.
    pub fn is_folder(&self, dir: &str) -> bool {
        self.under(dir).next().is_some()
    }

    /// What folder `dir` holds directly: its files and subfolders, by name.
    pub fn list(&self, dir: &str) -> Vec<Listed<'_>> {
        let mut out: Vec<Listed<'_>> = Vec::new();
        let skip = dir.len() + 1;
        for file in self.under(dir) {
            let rest = &file.path[skip..];
            match rest.split_once('/') {
                None => out.push(Listed::File(file)),
                Some((name, _)) => match out.last_mut() {
                    Some(Listed::Folder {
                        name: last,
                        size,
                        mod_time,
                    }) if last == name => {
                        *size += file.size();
                        *mod_time = (*mod_time).max(file.mod_time);
                    }
                    _ => out.push(Listed::Folder {
                        name: name.to_string(),
                        size: file.size(),
                        mod_time: file.mod_time,
                    }),
                },
            }
        }
        out
    }

    /// Check that `content` may be written at `path` (a free path the sandbox accepted),
    /// without writing it.
    pub fn check_write(&self, path: &str, content: &str) -> Result<(), FilesError> {
        if content.len() > MAX_FILE_BYTES {
            return Err(FilesError::TooLarge(content.len()));
        }
        self.check_place(path)?;
        if !self.files.contains_key(path) && self.files.len() >= MAX_FILES {
            return Err(FilesError::TooMany);
        }
        Ok(())
    }

    /// Check that a file could lie at `path`: it is not a folder, and no parent is a file.
    fn check_place(&self, path: &str) -> Result<(), FilesError> {
        if self.is_folder(path) {
            return Err(FilesError::IsFolder(path.to_string()));
        }
        let mut parent = path;
        while let Some((up, _)) = parent.rsplit_once('/') {
            if self.files.contains_key(up) {
                return Err(FilesError::ParentIsFile {
                    path: path.to_string(),
                    parent: up.to_string(),
                });
            }
            parent = up;
        }
        Ok(())
    }

    /// Write `content` at `path` as `origin` at `now`, replacing the whole file (its parent
    /// folders exist from then on). Returns the file as it was before.
    pub fn write(
        &mut self,
        path: &str,
        content: String,
        origin: String,
        now: u64,
    ) -> Result<Option<FreeFile>, FilesError> {
        self.check_write(path, &content)?;
        Ok(self.files.insert(
            path.to_string(),
            FreeFile {
                path: path.to_string(),
                content,
                mod_time: now,
                origin,
            },
        ))
    }

    /// Remove the file at `path`, returning it.
    pub fn remove(&mut self, path: &str) -> Option<FreeFile> {
        self.files.remove(path)
    }

    /// Put a file back as it was (`None`: absent), for the rollback of a failed command.
    pub fn restore(&mut self, path: &str, before: Option<FreeFile>) {
        match before {
            Some(file) => {
                self.files.insert(path.to_string(), file);
            }
            None => {
                self.files.remove(path);
            }
        }
    }
}

/// Undo and redo put free files back through this (see [`crate::commands::History`]).
impl FileSet for Files {
    fn is(&self, path: &str, state: Option<&FileState>) -> bool {
        match (self.files.get(path), state) {
            (None, None) => true,
            (Some(file), Some(state)) => file.is(state),
            _ => false,
        }
    }

    fn fits(&self, path: &str, state: Option<&FileState>) -> bool {
        state.is_none() || self.check_place(path).is_ok()
    }

    fn put(&mut self, path: &str, state: Option<FileState>) {
        self.restore(
            path,
            state.map(|s| FreeFile {
                path: path.to_string(),
                content: s.content,
                mod_time: s.mod_time,
                origin: s.origin,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_are_implicit() {
        let mut files = Files::new();
        files
            .write("plans/a/b.md", "one".into(), "human".into(), 5)
            .unwrap();
        files
            .write("plans/a/c/d.md", "four".into(), "human".into(), 9)
            .unwrap();
        files
            .write("plans/z.md", "z".into(), "human".into(), 1)
            .unwrap();
        assert!(files.is_folder("plans/a"));
        let listed = files.list("plans");
        assert_eq!(listed.len(), 2);
        assert_eq!(
            listed[0],
            Listed::Folder {
                name: "a".into(),
                size: 7,
                mod_time: 9
            }
        );
        assert!(matches!(
            files.write("plans/a", "x".into(), "human".into(), 1),
            Err(FilesError::IsFolder(_))
        ));
        assert!(matches!(
            files.write("plans/z.md/x", "x".into(), "human".into(), 1),
            Err(FilesError::ParentIsFile { .. })
        ));
        // `plans/a-b` sorts between `plans/a` and `plans/a/`; it is not under `plans/a`.
        files
            .write("plans/a-b.md", "x".into(), "human".into(), 1)
            .unwrap();
        assert_eq!(files.under("plans/a").count(), 2);
    }
}
