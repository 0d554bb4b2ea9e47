//! Research served by the core: the tools `research_url` and `search_research`, the page's
//! `research_list` and `research_delete`, and the units of `start_job {kind: "research"}`.
//!
//! **Reading a page** runs in three steps, none holding the session across an await, like
//! the machine-translation call (`mtl.rs`): check (the URL by [`crate::research::url`], with
//! the settings' `researchAllowPrivate`; the run's `researchPerRun` limit), fetch (a `GET`
//! through the settings' `researchProxy` template, or directly; at most [`MAX_PAGE_BYTES`]
//! read; abortable; under the tool's timeout, see [`Core::with_tool_timeout`]), then keep
//! (the note is upserted, stored as a `meta` record with the call's audit record, under a job
//! unit's hold when it is one, and announced with `research_changed`). A failure at any step
//! is the call's error result and keeps nothing.
//!
//! **Timeouts.** A tool declared asynchronous ([`crate::tools::ToolSpec::ASYNC`]) runs its
//! asynchronous step under `toolTimeoutsMs[tool]` (default 30 s), timed by the core's
//! injected [`Sleeper`]: when it fires, the step's future is dropped (the fetch is aborted)
//! and the call answers `timeout`; the run goes on with its next step.
//!
//! The notes of a project are loaded from the store once (`meta` records `research:…`) and
//! kept in memory (the core's `ResearchState` part).

use std::rc::Rc;

use futures_util::future::{select, Either};
use serde::{Deserialize, Serialize};
use serde_json::json;
use serde_json::Value;
use ts_rs::TS;

use super::records::{MetaRecord, ResearchRecord};
use super::{invalid, Core, On, Touched};
use crate::agent::AbortSignal;
use crate::commands::history::Applied;
use crate::commands::Origin;
use crate::error::Error;
use crate::llm::client::TransportError;
use crate::llm::HttpRequest;
use crate::persist;
use crate::research::{self, html, url, Fetched, Research, ResearchNote};
use crate::session::ToolCall;
use crate::store::Table;
use crate::tools::research::{
    ResearchUrlArgs, SearchResearchArgs, SearchScope, DEFAULT_LIMIT, MAX_LIMIT,
};
use crate::tools::{parse_args, ResultMeta, ToolError, ToolResult, ToolSpec};

/// The most bytes of a page read (the rest is not fetched).
pub const MAX_PAGE_BYTES: usize = 2 * 1024 * 1024;
/// The most URLs one research job reads.
pub const MAX_JOB_URLS: usize = 50;

/// Why an asynchronous step gave no value.
pub(super) enum StepError {
    /// The run was aborted.
    Aborted,
    /// The tool's timeout fired first (ms).
    Timeout(u64),
    /// It failed.
    Failed(ToolError),
}

/// `research_delete` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[ts(rename = "ResearchDeleteParams", optional_fields)]
pub(super) struct DeleteResearch {
    id: String,
}

/// `research_list`: the open project's research notes, newest first.
#[derive(Serialize, TS)]
#[ts(rename = "ResearchListing")]
pub(super) struct ResearchList {
    /// The notes (previews, not whole texts).
    notes: Vec<research::NoteSummary>,
    /// How many notes there are.
    count: usize,
    /// How many bytes of text they keep.
    bytes: usize,
    /// The caps: beyond them the notes read longest ago go first.
    limits: ResearchLimits,
}

/// The caps on a project's research notes.
#[derive(Serialize, TS)]
pub(super) struct ResearchLimits {
    /// Most notes.
    notes: usize,
    /// Most bytes of text.
    bytes: usize,
}

/// `research_delete`: the note deleted.
#[derive(Serialize, TS)]
#[ts(rename = "ResearchDeleted")]
pub(super) struct ResearchDeleted {
    /// Its id.
    deleted: String,
}

/// A page as fetched.
struct Page {
    bytes: Vec<u8>,
    content_type: Option<String>,
    cut: bool,
}

/// `value` percent-encoded for a URL's query (everything but unreserved characters).
fn encode_component(value: &str) -> String {
    value
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The text of a `research_url` result: what was kept, then the page's title and preview as
/// a quoted block of untrusted page content.
fn read_text(note: &ResearchNote, updated: bool, cut: bool) -> String {
    format!(
        "{} research note {} of {}, {} characters{}. Its title and preview:\n{}",
        if updated { "Updated" } else { "Kept" },
        note.id,
        note.url,
        note.text.chars().count(),
        if cut {
            format!(
                "; the page is larger than {} MB, only its start was read",
                MAX_PAGE_BYTES >> 20
            )
        } else {
            String::new()
        },
        note.quoted(false).0
    )
}

impl Core {
    /// The same core, reading research pages with `reader` (the worker's reader module;
    /// natively the core reads them in process without one).
    pub fn with_reader(self, reader: Rc<dyn html::PageReader>) -> Self {
        self.research.set_reader(reader);
        self
    }

    /// The research notes of `project`, loaded once.
    pub(super) async fn ensure_research(&self, project: &str) -> Result<(), Error> {
        if self.research.loaded(project) {
            return Ok(());
        }
        let records = self
            .env
            .store
            .get_by_index(Table::Meta, "project", json!(project))
            .await?;
        let notes = records.iter().filter_map(ResearchNote::from_record);
        let loaded = Research::from_notes(notes);
        self.research.load(project, loaded);
        Ok(())
    }

    /// Run `step` under the timeout of the asynchronous tool `tool` and until `abort`: on
    /// timeout (or abort) the step's future is dropped, which cancels what it was doing.
    pub(super) async fn with_tool_timeout<T>(
        &self,
        tool: &str,
        abort: Option<&AbortSignal>,
        step: impl std::future::Future<Output = Result<T, ToolError>>,
    ) -> Result<T, StepError> {
        let ms = self.settings.read(|s| s.tool_timeout_ms(tool));
        let Some(llm) = self.llm() else {
            return Err(StepError::Failed(ToolError::new(
                "failed",
                "this core was built without a way to make HTTP requests",
            )));
        };
        if abort.is_some_and(AbortSignal::is_aborted) {
            return Err(StepError::Aborted);
        }
        let aborted = match abort {
            Some(signal) => Either::Left(signal.aborted()),
            None => Either::Right(std::future::pending()),
        };
        let stop = select(llm.sleeper.sleep(ms), aborted);
        match select(std::pin::pin!(step), stop).await {
            Either::Left((done, _)) => done.map_err(StepError::Failed),
            Either::Right((Either::Left(_), _)) => Err(StepError::Timeout(ms)),
            Either::Right((Either::Right(_), _)) => Err(StepError::Aborted),
        }
    }

    /// Run a research tool call on `project`.
    pub(super) async fn execute_research(
        &self,
        project: &str,
        call: ToolCall,
        origin: Origin,
        abort: Option<&AbortSignal>,
        ctx: &super::CallCtx,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        self.ensure_settings().await?;
        self.ensure_research(project).await?;
        let started = self.env.clock.now_ms();
        let digest = persist::digest(&call.args.to_string());
        let (name, call_id) = (call.name.clone(), call.id.clone());
        let hold = ctx.hold.as_deref();
        let meta = |started: u64| ResultMeta {
            execution_time_ms: self.env.clock.now_ms().saturating_sub(started),
            ..ResultMeta::default()
        };
        let args = match self.registry.validate_call(&name, call.args) {
            Ok((_, args)) => Value::Object(args),
            Err(error) => {
                let result = ToolResult::error(&error, meta(started));
                return self
                    .audit_only(project, &name, call_id, digest, origin, result, hold)
                    .await;
            }
        };
        if name == crate::tools::research::SearchResearch::NAME {
            let result = match self.search_research(project, args, &origin) {
                Ok(data) => ToolResult::success(data, meta(started)),
                Err(error) => ToolResult::error(&error, meta(started)),
            };
            return self
                .audit_only(project, &name, call_id, digest, origin, result, hold)
                .await;
        }
        let args: ResearchUrlArgs = match parse_args(args) {
            Ok(args) => args,
            Err(error) => {
                let result = ToolResult::error(&error, meta(started));
                return self
                    .audit_only(project, &name, call_id, digest, origin, result, hold)
                    .await;
            }
        };
        let limited = match (&origin, &ctx.run) {
            (Origin::Agent(_), Some(run)) => Some(run.clone()),
            _ => None,
        };
        let fetched = match self.rate_check(limited.as_deref()) {
            Err(error) => Err(StepError::Failed(error)),
            Ok(()) => self.read_page(&args.url, abort).await,
        };
        let (page, cut) = match fetched {
            Ok(page) => page,
            Err(error) => {
                let result = match error {
                    StepError::Aborted => crate::agent::aborted_result(),
                    StepError::Timeout(ms) => ToolResult::error(
                        &ToolError::new(
                            "timeout",
                            format!(
                                "Reading {} took longer than {} s, so it was stopped and nothing was kept. Try again later, or another page.",
                                args.url.chars().take(200).collect::<String>(),
                                ms / 1000
                            ),
                        ),
                        meta(started),
                    ),
                    StepError::Failed(mut error) => {
                        error.message = self.settings.read(|s| s.redact(&error.message));
                        ToolResult::error(&error, meta(started))
                    }
                };
                return self
                    .audit_only(project, &name, call_id, digest, origin, result, hold)
                    .await;
            }
        };
        let asked_by = research::asked_by(&origin);
        let audit_origin = origin.clone();
        self.keep_research(project, page, &asked_by, hold, |note, updated| {
            // The page's own words reach the model quoted (its title, one line, neutralised).
            let data = json!({
                "text": read_text(note, updated, cut),
                "id": note.id,
                "title": research::quote::neutralise(&note.title).0,
                "url": note.url,
                "normalized": note.normalized,
                "chars": note.text.chars().count(),
                "updated": updated,
                "truncated": cut,
                "injection_markers": note.quoted(true).1.markers,
            });
            let result = ToolResult::success(data, meta(started));
            let audit = self.audit_record(project, &name, call_id, digest, &audit_origin, &result);
            (result, audit)
        })
        .await
    }

    /// Count one `research_url` call of `run` against `researchPerRun`.
    fn rate_check(&self, run: Option<&str>) -> Result<(), ToolError> {
        let Some(run) = run else { return Ok(()) };
        let limit = self.settings.read(|s| s.research_per_run);
        if !self.research.count_page(run, limit) {
            return Err(ToolError::new(
                "rate_limited",
                format!(
                    "This run has read {limit} pages already, the most one run may ('researchPerRun'); use search_research on what was read, or ask the writer to research more from the Research panel."
                ),
            ));
        }
        Ok(())
    }

    /// Forget a run's research count (the run ended).
    pub(super) fn forget_research_run(&self, run: &str) {
        self.research.forget_run(run);
    }

    /// Check, fetch and read one page: the page as a note to keep, and whether it was cut
    /// at [`MAX_PAGE_BYTES`].
    async fn read_page(
        &self,
        address: &str,
        abort: Option<&AbortSignal>,
    ) -> Result<(Fetched, bool), StepError> {
        let settings = self.settings.get();
        let checked = url::check(address, settings.research_allow_private)
            .map_err(|e| StepError::Failed(ToolError::new(e.code(), e.to_string())))?;
        let target = if settings.research_proxy.is_empty() {
            checked.url.clone()
        } else {
            settings
                .research_proxy
                .replace("{url}", &encode_component(&checked.url))
        };
        let page = self
            .with_tool_timeout(
                crate::tools::research::ResearchUrl::NAME,
                abort,
                self.fetch_page(&target, &checked.url, !settings.research_proxy.is_empty()),
            )
            .await?;
        let text = html::decode_bytes(
            &page.bytes,
            page.content_type.as_deref(),
            &*self.env.decoder,
        );
        let plain = page
            .content_type
            .as_deref()
            .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/plain"));
        let read = if plain {
            html::Extracted {
                title: String::new(),
                text: text.trim().to_string(),
                description: None,
            }
        } else {
            let reader = self.research.reader().ok_or_else(|| {
                StepError::Failed(ToolError::new(
                    "unavailable",
                    "this core has no page reader, so it cannot read web pages",
                ))
            })?;
            let read = reader.read(text).await.map_err(|e| {
                StepError::Failed(ToolError::new(
                    "unavailable",
                    format!("the page reader could not run: {e}"),
                ))
            })?;
            read.map_err(|e| {
                StepError::Failed(ToolError::new(
                    e.code(),
                    format!("{}: {e}. Try another page.", checked.url),
                ))
            })?
        };
        if read.text.trim().is_empty() {
            return Err(StepError::Failed(ToolError::new(
                "no_text",
                format!(
                    "{} has no readable text (a page built by scripts, or an empty page); nothing was kept. Try another page.",
                    checked.url
                ),
            )));
        }
        let title = if read.title.is_empty() {
            checked.host.clone()
        } else {
            read.title
        };
        Ok((
            Fetched {
                url: address.trim().to_string(),
                normalized: checked.url,
                title,
                text: read.text,
                description: read.description,
            },
            page.cut,
        ))
    }

    /// `GET` `target` (the page, or the proxy's address for it): its first
    /// [`MAX_PAGE_BYTES`] and content type, or why not.
    async fn fetch_page(&self, target: &str, page: &str, proxied: bool) -> Result<Page, ToolError> {
        let llm = self.llm().ok_or_else(|| {
            ToolError::new(
                "failed",
                "this core was built without a way to make HTTP requests",
            )
        })?;
        let request = HttpRequest {
            method: "GET".into(),
            url: target.to_string(),
            headers: vec![(
                "accept".into(),
                "text/html,application/xhtml+xml,text/plain;q=0.8".into(),
            )],
            body: String::new(),
        };
        let via = if proxied {
            " (through the research proxy)"
        } else {
            ""
        };
        let mut response = llm.transport.send(&request).await.map_err(|e| {
            let TransportError::Network(e) = e;
            ToolError::new(
                "failed",
                format!(
                    "Could not read {page}{via}: {e}.{}",
                    if proxied {
                        " Check 'researchProxy' in the settings."
                    } else {
                        " Most sites can only be read through a fetch proxy: set 'researchProxy' in the settings."
                    }
                ),
            )
        })?;
        let header = |name: &str| {
            response
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let content_type = header("x-proxy-content-type").or_else(|| header("content-type"));
        let mut bytes = Vec::new();
        let mut cut = false;
        while let Some(chunk) = response.body.next_chunk().await {
            let chunk = chunk.map_err(|TransportError::Network(e)| {
                ToolError::new(
                    "failed",
                    format!("The connection broke while reading {page}: {e}"),
                )
            })?;
            bytes.extend_from_slice(&chunk);
            if bytes.len() >= MAX_PAGE_BYTES {
                bytes.truncate(MAX_PAGE_BYTES);
                cut = true;
                break;
            }
        }
        if !(200..300).contains(&response.status) {
            let said: String = String::from_utf8_lossy(&bytes)
                .trim()
                .chars()
                .take(200)
                .collect();
            return Err(ToolError::new(
                "failed",
                format!(
                    "{page} answered HTTP {}{via}{}; nothing was kept.",
                    response.status,
                    if said.is_empty() || !proxied {
                        String::new()
                    } else {
                        format!(": {said}")
                    }
                ),
            )
            .with_details(json!({"status": response.status})));
        }
        if let Some(kind) = &content_type {
            let lower = kind.to_ascii_lowercase();
            let readable = ["text/html", "application/xhtml", "text/plain"]
                .iter()
                .any(|t| lower.starts_with(t));
            if !readable {
                return Err(ToolError::new(
                    "not_html",
                    format!(
                        "{page} is not a web page ({}); only HTML and plain text can be researched.",
                        kind.chars().take(80).collect::<String>()
                    ),
                ));
            }
        }
        Ok(Page {
            bytes,
            content_type,
            cut,
        })
    }

    /// Keep a page as a note of `project` (a new note or the update of its address's note),
    /// drop the oldest notes over the caps, and save and announce it; `finish` makes the
    /// call's result and audit record from the note kept.
    async fn keep_research(
        &self,
        project: &str,
        page: Fetched,
        asked_by: &str,
        hold: Option<&str>,
        finish: impl FnOnce(&ResearchNote, bool) -> (ToolResult, persist::AuditRecord),
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        let now = self.env.clock.now_ms();
        let upserted = self.research.update(project, |notes| {
            notes.upsert(project, page, asked_by, now, || self.env.ids.next_id())
        });
        let (result, audit) = finish(&upserted.note, upserted.updated);
        let touched = Touched {
            audit: Some(audit),
            meta_puts: vec![research_record(&upserted.note)],
            meta_deletes: upserted
                .evicted
                .iter()
                .map(|id| research::record_key(project, id))
                .collect(),
            ..Touched::default()
        };
        let kept = self
            .mutate_on(On::project(project).held(hold), |_| {
                Ok(((result, Vec::new()), touched))
            })
            .await?;
        self.emit(ResearchChangedEvent {
            project: project.to_string(),
            action: if upserted.updated {
                ResearchAction::Updated
            } else {
                ResearchAction::Added
            },
            note: upserted.note.summary(),
            evicted: Some(upserted.evicted),
        });
        Ok(kept)
    }

    /// `search_research {query, limit?, scope?}`: an agent sees its own notes and the
    /// writer's, or with `scope: "all"` every note; the writer sees every note.
    fn search_research(
        &self,
        project: &str,
        args: Value,
        origin: &Origin,
    ) -> Result<Value, ToolError> {
        let args: SearchResearchArgs = parse_args(args)?;
        if args.query.trim().is_empty() {
            return Err(ToolError::invalid_args(
                "'query' must not be empty: give the words to look for",
            ));
        }
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let own = research::asked_by(origin);
        let everyone = args.scope == SearchScope::All || !matches!(origin, Origin::Agent(_));
        let visible = |n: &ResearchNote| everyone || n.asked_by == own || n.source() == "human";
        let (total, others, hits) = self.research.read(project, |notes| {
            let hits = notes
                .map(|n| n.search(&args.query, limit, visible))
                .unwrap_or_default();
            let all = notes.map_or(0, Research::len);
            let total = notes.map_or(0, |n| n.list().into_iter().filter(|n| visible(n)).count());
            (total, all - total, hits)
        });
        let text = if hits.is_empty() {
            let others = if others > 0 {
                format!(" Other agents keep {others} more notes: scope \"all\" searches them too.")
            } else {
                String::new()
            };
            if total == 0 {
                let whose = if everyone {
                    ""
                } else {
                    " of yours or the writer's"
                };
                format!("There are no research notes{whose} yet: read pages with research_url, or ask the writer to research from the Research panel.{others}")
            } else {
                format!(
                    "No research note matches \"{}\" ({total} notes searched); try other words.{others}",
                    args.query.trim()
                )
            }
        } else {
            let mut text = format!(
                "{} of {total} research notes match \"{}\":",
                hits.len(),
                args.query.trim()
            );
            for (i, hit) in hits.iter().enumerate() {
                text.push_str(&format!(
                    "\n{}. {} (read by {})\n{}",
                    i + 1,
                    hit.url,
                    hit.by,
                    hit.content
                ));
            }
            text
        };
        Ok(json!({ "text": text, "hits": hits, "total": total }))
    }

    /// Serve `research_list`: the project's notes, newest first (previews, not whole texts).
    pub(super) async fn research_list(&self) -> Result<ResearchList, Error> {
        let project = self.current()?;
        self.ensure_research(&project).await?;
        Ok(self.research.read(&project, |notes| ResearchList {
            notes: notes
                .map(|n| n.list().into_iter().map(ResearchNote::summary).collect())
                .unwrap_or_default(),
            count: notes.map_or(0, Research::len),
            bytes: notes.map_or(0, Research::bytes),
            limits: ResearchLimits {
                notes: research::MAX_NOTES,
                bytes: research::MAX_BYTES,
            },
        }))
    }

    /// Serve `research_delete {id}`.
    pub(super) async fn research_delete(
        &self,
        p: DeleteResearch,
    ) -> Result<ResearchDeleted, Error> {
        let project = self.current()?;
        self.ensure_research(&project).await?;
        let gone = self.research.delete(&project, &p.id);
        let Some(note) = gone else {
            return Err(Error::from(ToolError::not_found(format!(
                "no research note '{}' in this project; research_list shows them",
                p.id.chars().take(80).collect::<String>()
            ))));
        };
        let key = research::record_key(&project, &note.id);
        self.mutate_on(On::project(&project), |_| {
            Ok((
                (),
                Touched {
                    meta_deletes: vec![key],
                    ..Touched::default()
                },
            ))
        })
        .await?;
        let summary = note.summary();
        self.emit(ResearchChangedEvent {
            project: project.to_string(),
            action: ResearchAction::Deleted,
            note: summary,
            evicted: None,
        });
        Ok(ResearchDeleted { deleted: note.id })
    }

    /// The research notes of `project` for its export.
    pub(super) async fn research_for_export(&self, project: &str) -> Result<Vec<Value>, Error> {
        self.ensure_research(project).await?;
        Ok(self.research.read(project, |notes| {
            notes
                .map(|n| n.list().into_iter().map(crate::error::to_json).collect())
                .unwrap_or_default()
        }))
    }

    /// Check the research notes of an imported document (before anything is stored).
    pub(super) fn check_imported_research(
        &self,
        project: &str,
        notes: &[Value],
    ) -> Result<Vec<ResearchNote>, Error> {
        let mut out: Vec<ResearchNote> = Vec::new();
        for (i, value) in notes.iter().enumerate() {
            let mut note: ResearchNote = serde_json::from_value(value.clone())
                .map_err(|e| invalid("import_project", &format!("research note {i}: {e}")))?;
            note.project = project.to_string();
            if note.id.trim().is_empty()
                || out
                    .iter()
                    .any(|n| n.id == note.id || n.normalized == note.normalized)
            {
                return Err(invalid(
                    "import_project",
                    &format!("research note {i} has no id, or repeats another's id or address"),
                ));
            }
            out.push(note);
        }
        if out.len() > research::MAX_NOTES {
            return Err(invalid(
                "import_project",
                &format!(
                    "the export has more than {} research notes",
                    research::MAX_NOTES
                ),
            ));
        }
        Ok(out)
    }

    /// Store imported research notes of `project`.
    pub(super) async fn store_imported_research(
        &self,
        project: &str,
        notes: Vec<ResearchNote>,
    ) -> Result<(), Error> {
        if !notes.is_empty() {
            let mut batch = crate::store::Batch::new();
            for note in &notes {
                batch.put_value(Table::Meta, research_record(note).to_value());
            }
            self.env.store.commit(batch).await?;
        }
        self.research.set(project, Research::from_notes(notes));
        Ok(())
    }

    /// Read one page for a research job's unit, as the writer, under the unit's `hold`: the
    /// unit's result (the note's summary), or why not.
    pub(super) async fn research_unit(
        &self,
        project: &str,
        address: &str,
        hold: &str,
        abort: &AbortSignal,
    ) -> Result<Value, String> {
        self.ensure_settings().await.map_err(|e| e.to_string())?;
        self.ensure_research(project)
            .await
            .map_err(|e| e.to_string())?;
        let call = ToolCall {
            id: Some(hold.to_string()),
            name: crate::tools::research::ResearchUrl::NAME.into(),
            args: json!({ "url": address }),
        };
        let ctx = super::CallCtx {
            hold: Some(hold.to_string()),
            ..Default::default()
        };
        let (result, _) = self
            .execute_research(project, call, Origin::User, Some(abort), &ctx)
            .await
            .map_err(|e| e.to_string())?;
        if result.is_success() {
            Ok(json!({
                "id": result.data["id"],
                "title": result.data["title"],
                "url": result.data["url"],
                "updated": result.data["updated"],
                "text": result.data["text"],
            }))
        } else {
            Err(result.data["message"]
                .as_str()
                .unwrap_or("the page could not be read")
                .to_string())
        }
    }
}

/// What happened to a research note.
#[derive(Serialize, TS, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum ResearchAction {
    /// A page read for the first time.
    Added,
    /// The same address read again.
    Updated,
    /// The note was deleted.
    Deleted,
}

/// `research_changed`: a research note was added, updated or deleted.
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub(super) struct ResearchChangedEvent {
    /// The project.
    pub(super) project: String,
    /// What happened.
    pub(super) action: ResearchAction,
    /// The note (a preview of its text).
    pub(super) note: crate::research::NoteSummary,
    /// Notes dropped to stay within the caps (on `added` and `updated`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) evicted: Option<Vec<String>>,
}

/// A research note's `meta` record.
fn research_record(note: &ResearchNote) -> MetaRecord {
    MetaRecord::Research(ResearchRecord {
        id: crate::research::record_key(&note.project, &note.id),
        project: note.project.clone(),
        rev: 0,
        note: note.clone(),
    })
}
