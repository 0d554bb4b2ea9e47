//! The writer's story-bible requests, served by the [`Core`]: `bible_list`, `bible_save`
//! and `bible_delete`.
//!
//! The writer's changes carry origin `human` (so agents must ask before overwriting them).
//! A save or delete may name the version the writer's form was based on (`baseVersion`): if
//! the entity changed since (an agent updated it meanwhile), the request fails with
//! `conflict` and changes nothing, so the writer never overwrites what they have not seen.
//! Each change is saved as one batch and announced with `bible_changed`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

use super::{invalid, Core, Touched};
use crate::bible::flat::FlatEntity;
use crate::bible::{is_empty_value, Actor, BibleError, Entity, Kind};
use crate::commands::Origin;
use crate::error::Error;
use crate::tools::ToolError;

/// `bible_list` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "BibleListParams", optional_fields)]
pub(super) struct BibleList {
    /// Only this kind.
    #[serde(default)]
    kind: Option<String>,
}

/// `bible_save` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "BibleSaveParams", optional_fields)]
pub(super) struct BibleSave {
    kind: String,
    /// The entity; a new one (id made from its name) when absent.
    #[serde(default)]
    id: Option<String>,
    /// Fields to set (`null` clears one).
    fields: Map<String, Value>,
    /// The version the writer's form showed.
    #[serde(default)]
    base_version: Option<u64>,
}

/// `bible_delete` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "BibleDeleteParams", optional_fields)]
pub(super) struct BibleDelete {
    kind: String,
    id: String,
    #[serde(default)]
    base_version: Option<u64>,
}

/// `bible_revisions` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "BibleRevisionsParams", optional_fields)]
pub(super) struct BibleRevisions {
    kind: String,
    id: String,
    /// Only this field.
    #[serde(default)]
    field: Option<String>,
}

/// One write of a story-bible field that its log keeps.
#[derive(Serialize, TS)]
#[ts(rename = "BibleRevision")]
pub(super) struct Revision {
    /// The field.
    field: String,
    /// The value written (`null`: cleared).
    #[ts(type = "unknown")]
    value: Value,
    /// Who wrote it (`human`, `agent:<name>:<date>`, `import`), on whichever device.
    origin: String,
    /// When (ms).
    at: u64,
    /// Whether it is the field's value now.
    current: bool,
}

/// `bible_revisions`: an entity's field writes, newest first.
#[derive(Serialize, TS)]
#[ts(rename = "BibleRevisions")]
pub(super) struct Revisions {
    /// The entity's kind.
    #[ts(type = "BibleKind")]
    kind: Kind,
    /// The entity's id.
    id: String,
    /// Its fields' writes, newest first: restore one with `bible_save`.
    revisions: Vec<Revision>,
}

/// `bible_list`: the open project's entities by kind.
#[derive(Serialize, TS)]
#[ts(rename = "BibleListing")]
pub(super) struct Listing {
    /// The open project.
    project: String,
    /// Each kind's entities (every kind, or the one asked for), by kind.
    #[ts(type = "{ [K in BibleKind]?: Array<BibleEntity<K>> }")]
    kinds: BTreeMap<&'static str, Vec<FlatEntity>>,
}

/// `bible_delete`: the entity as it was.
#[derive(Serialize, TS)]
#[ts(rename = "BibleDeleted")]
pub(super) struct Deleted {
    /// The deleted entity.
    deleted: FlatEntity,
}

fn kind_of(request: &str, kind: &str) -> Result<Kind, Error> {
    kind.parse()
        .map_err(|e: BibleError| invalid(request, &e.to_string()))
}

fn bible_error(e: BibleError) -> Error {
    Error::from(ToolError::from(e))
}

fn check_base(entity: &Entity, base: Option<u64>) -> Result<(), Error> {
    match base {
        Some(base) if base != entity.version => Err(bible_error(BibleError::Stale {
            kind: entity.kind,
            id: entity.id.clone(),
            expected: base,
            current: entity.version,
        })),
        _ => Ok(()),
    }
}

impl Core {
    pub(super) fn bible_list(&self, p: BibleList) -> Result<Listing, Error> {
        let only = p
            .kind
            .as_deref()
            .map(|k| kind_of("bible_list", k))
            .transpose()?;
        self.with_session(|s| {
            let kinds = Kind::ALL
                .into_iter()
                .filter(|kind| only.is_none_or(|o| o == *kind))
                .map(|kind| {
                    (
                        kind.name(),
                        s.bible.list(kind).map(FlatEntity::of).collect(),
                    )
                })
                .collect();
            Ok(Listing {
                project: s.project.id.clone(),
                kinds,
            })
        })
    }

    /// Serve `bible_revisions`: the writes of an entity's fields that the project's document
    /// keeps (the last ones of each field, from every device), newest first. A value that
    /// lost to another written at the same time on another device is here, to restore.
    pub(super) fn bible_revisions(&self, p: BibleRevisions) -> Result<Revisions, Error> {
        const REQUEST: &str = "bible_revisions";
        let kind = kind_of(REQUEST, &p.kind)?;
        if let Some(field) = &p.field {
            if kind.field(field).is_none() {
                return Err(invalid(
                    REQUEST,
                    &format!("a {kind} has no field '{field}'"),
                ));
            }
        }
        let project = self.current()?;
        self.projects
            .read(&project, |open| {
                let entity = open.session.bible.get(kind, &p.id);
                let mut revisions: Vec<Revision> = kind
                    .fields()
                    .iter()
                    .filter(|spec| p.field.as_deref().is_none_or(|f| f == spec.name))
                    .flat_map(|spec| {
                        let now = entity.map(|e| (e.get(spec.name).clone(), e.origin(spec.name)));
                        open.replica
                            .field_log(kind, &p.id, spec.name)
                            .into_iter()
                            .map(move |w| Revision {
                                current: now.as_ref().is_some_and(|(value, origin)| {
                                    *value == w.value && *origin == Some(w.origin.as_str())
                                }),
                                field: spec.name.to_string(),
                                value: w.value,
                                origin: w.origin,
                                at: w.at,
                            })
                    })
                    .collect();
                revisions.sort_by_key(|r| std::cmp::Reverse(r.at));
                Revisions {
                    kind,
                    id: p.id.clone(),
                    revisions,
                }
            })
            .ok_or_else(|| super::parts::not_open(&project))
    }

    pub(super) async fn bible_save(&self, p: BibleSave) -> Result<FlatEntity, Error> {
        let kind = kind_of("bible_save", &p.kind)?;
        let now = self.env.clock.now_ms();
        let fields: Vec<(String, Value)> = p.fields.into_iter().collect();
        if fields.is_empty() {
            return Err(invalid(
                "bible_save",
                "'fields' must name at least one field",
            ));
        }
        self.mutate(|s| {
            let id = match p.id.as_deref().map(str::trim) {
                Some(id) if !id.is_empty() => id.to_string(),
                _ => match kind.singleton_id() {
                    Some(only) => only.to_string(),
                    None => {
                        let hint = kind
                            .fields()
                            .iter()
                            .find(|f| f.required)
                            .and_then(|f| fields.iter().find(|(n, _)| n == f.name))
                            .and_then(|(_, v)| v.as_str())
                            .unwrap_or(kind.name());
                        s.bible.fresh_id(kind, hint)
                    }
                },
            };
            let entity = match s.bible.get(kind, &id) {
                Some(existing) => {
                    check_base(existing, p.base_version)?;
                    s.bible
                        .update(kind, &id, fields, &Actor::Human, now)
                        .map_err(bible_error)?
                }
                None => {
                    if p.base_version.is_some_and(|v| v > 0) {
                        return Err(bible_error(BibleError::NotFound {
                            kind,
                            id,
                            hint: " (it was deleted meanwhile)".into(),
                        }));
                    }
                    let fields = fields
                        .into_iter()
                        .filter(|(_, v)| !is_empty_value(Some(v)))
                        .collect();
                    s.bible
                        .create(kind, &id, fields, &Actor::Human, now)
                        .map_err(bible_error)?
                }
            };
            let flat = FlatEntity::of(entity);
            let changed = vec![(kind, id)];
            self.emit_bible(s, &changed, &Origin::User);
            Ok((
                flat,
                Touched {
                    bible: changed,
                    ..Touched::default()
                },
            ))
        })
        .await
    }

    pub(super) async fn bible_delete(&self, p: BibleDelete) -> Result<Deleted, Error> {
        let kind = kind_of("bible_delete", &p.kind)?;
        self.mutate(|s| {
            let entity = s.bible.require(kind, &p.id).map_err(bible_error)?;
            check_base(entity, p.base_version)?;
            let removed = s.bible.remove(kind, &p.id).map_err(bible_error)?;
            let changed = vec![(kind, p.id.clone())];
            self.emit_bible(s, &changed, &Origin::User);
            Ok((
                Deleted {
                    deleted: FlatEntity::of(&removed),
                },
                Touched {
                    bible: changed,
                    ..Touched::default()
                },
            ))
        })
        .await
    }
}
