//! The model running in the browser (`provider: "local"`): loading it before a call, with
//! `model_progress` events while its file downloads; listing and deleting the model files
//! the browser keeps.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{invalid, Core};
use crate::agent::context::ContextPolicy;
use crate::error::{Error, StoreError};
use crate::llm::client::CallOptions;
use crate::llm::local::{LocalInfo, LocalRuntime, LocalSpec};
use crate::llm::tokens::default_window;
use crate::llm::{ProviderConfig, ProviderKind};
use crate::settings::Settings;

/// Where the loading of a model in the browser stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub(super) enum ModelPhase {
    /// Its file is being downloaded.
    Downloading,
    /// The file is here (downloaded, or kept from before); the model is being loaded.
    Loading,
    /// It is loaded and answers.
    Ready,
    /// It could not be downloaded or loaded (`error` says why).
    Failed,
}

/// `model_progress`: a model running in the browser is being downloaded or loaded.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(optional_fields)]
pub(super) struct ModelProgressEvent {
    /// The model's URL.
    pub(super) url: String,
    /// Where it stands.
    pub(super) phase: ModelPhase,
    /// Bytes downloaded (the whole size once it is here).
    pub(super) loaded: u64,
    /// Bytes in all (0 while unknown).
    pub(super) total: u64,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) error: Option<String>,
}

/// `delete_local_model` params.
#[derive(Debug, Deserialize, TS)]
#[serde(deny_unknown_fields)]
pub struct DeleteLocalModel {
    /// The model's URL, as `local_models` lists it.
    pub url: String,
}

/// `delete_local_model`: whether a kept model file was deleted.
#[derive(Debug, Serialize, TS)]
pub struct LocalModelDeleted {
    /// `false` when the browser kept no model of that URL.
    pub deleted: bool,
}

/// A model file the browser keeps.
#[derive(Debug, Serialize, TS)]
pub struct LocalModelView {
    /// The URL it was downloaded from.
    pub url: String,
    /// Its size in bytes.
    pub size: u64,
    /// Whether it is the model loaded now.
    pub loaded: bool,
}

/// `local_models`: the model files the browser keeps.
#[derive(Debug, Serialize, TS)]
pub struct LocalModels {
    /// Whether this core can run models in the browser at all.
    pub available: bool,
    /// The kept files.
    pub models: Vec<LocalModelView>,
    /// Their sizes together, in bytes.
    pub total: u64,
}

/// The shortest response and idle timeouts of a call to a model in the browser (ms): it
/// answers its first byte only after reading the whole prompt, which takes minutes on a slow
/// CPU, and nothing on the way can hang as a network does.
const LOCAL_TIMEOUT_MS: u64 = 600_000;

/// The timeouts and retries of a model call, by the settings and the provider's kind.
pub(super) fn call_options(settings: &Settings, kind: ProviderKind) -> CallOptions {
    let (connect, idle) = match kind {
        ProviderKind::Local => (
            settings.connect_timeout_ms.max(LOCAL_TIMEOUT_MS),
            settings.idle_timeout_ms.max(LOCAL_TIMEOUT_MS),
        ),
        _ => (settings.connect_timeout_ms, settings.idle_timeout_ms),
    };
    CallOptions {
        connect_timeout_ms: connect,
        idle_timeout_ms: idle,
        text_batch_ms: settings.stream_batch_ms,
        ..CallOptions::default()
    }
}

/// How a run keeps its conversation within the model's context window: the agent's window,
/// else the settings', else the model's known one; `None` with compaction off.
pub(super) fn context_policy(
    settings: &Settings,
    provider: &ProviderConfig,
    spec: &crate::agent::AgentSpec,
) -> Option<ContextPolicy> {
    if !settings.compaction {
        return None;
    }
    let window = spec
        .model
        .as_ref()
        .and_then(|m| m.context_window)
        .or(settings.context_window)
        .or_else(|| default_window(provider));
    Some(ContextPolicy {
        window,
        keep_verbatim: settings.keep_verbatim,
    })
}

/// How often download progress is reported: every this many per cent.
const PROGRESS_STEP_PERCENT: u64 = 1;

impl Core {
    /// The same core, able to run `local` models through `runtime` (the worker passes the
    /// wllama bridge).
    pub fn with_local_model(self, runtime: Rc<dyn LocalRuntime>) -> Self {
        self.shared.model.set_local(runtime);
        self
    }

    /// This core's state without a page's open project: for events every page hears.
    pub(super) fn for_every_page(&self) -> Core {
        Core::every_page_of(Rc::clone(&self.shared))
    }

    /// A core over `shared` without a page's open project.
    pub(super) fn every_page_of(shared: Rc<super::Shared>) -> Core {
        Core {
            shared,
            current: RefCell::new(None),
            client: None,
        }
    }

    fn local_runtime(&self) -> Result<Rc<dyn LocalRuntime>, Error> {
        self.model.local().ok_or_else(|| {
            Error::NoModel(
                "this core cannot run models in the browser (the local provider needs the worker's wllama runtime)"
                    .into(),
            )
        })
    }

    /// Where to reach the settings' model, ready to call: a model in the browser is loaded
    /// first (its download reported by `model_progress`), and its template's tool support
    /// decides how tools are offered.
    pub(super) async fn model_config(&self, settings: &Settings) -> Result<ProviderConfig, String> {
        let mut config = settings.provider_config()?;
        if config.kind == ProviderKind::Local {
            let spec = settings.local_spec().ok_or_else(|| {
                "no model is configured: the local provider needs the URL of a .gguf file"
                    .to_string()
            })?;
            let info = self.load_local(&spec).await.map_err(|e| e.to_string())?;
            config.local.template_tools = info.tool_template;
        }
        Ok(config)
    }

    /// Load `spec`'s model in the browser, reporting the download.
    async fn load_local(&self, spec: &LocalSpec) -> Result<LocalInfo, Error> {
        let runtime = self.local_runtime()?;
        let reporter = self.for_every_page();
        let url = spec.url.clone();
        let last = Rc::new(Cell::new(None::<(u64, bool)>));
        let progress = {
            let url = url.clone();
            Rc::new(move |loaded: u64, total: u64| {
                let here = total > 0 && loaded >= total;
                let percent = loaded.saturating_mul(100).checked_div(total).unwrap_or(0);
                let step = percent / PROGRESS_STEP_PERCENT;
                if last.get() == Some((step, here)) {
                    return;
                }
                last.set(Some((step, here)));
                reporter.emit(ModelProgressEvent {
                    url: url.clone(),
                    phase: if here {
                        ModelPhase::Loading
                    } else {
                        ModelPhase::Downloading
                    },
                    loaded,
                    total,
                    error: None,
                });
            })
        };
        match runtime.load(spec, progress).await {
            Ok(info) => {
                let fresh = self.model.loaded().as_ref() != Some(&info);
                self.model.set_loaded(Some(info.clone()));
                if fresh {
                    self.emit(ModelProgressEvent {
                        url: info.url.clone(),
                        phase: ModelPhase::Ready,
                        loaded: info.size,
                        total: info.size,
                        error: None,
                    });
                }
                Ok(info)
            }
            Err(reason) => {
                self.model.set_loaded(None);
                self.emit(ModelProgressEvent {
                    url,
                    phase: ModelPhase::Failed,
                    loaded: 0,
                    total: 0,
                    error: Some(reason.clone()),
                });
                Err(Error::NoModel(format!(
                    "the model in the browser could not be loaded: {reason}"
                )))
            }
        }
    }

    /// Start loading the settings' model in the browser, if they name one that is not loaded
    /// (after `set_settings`): the writer sees the download at once, not at the first run.
    pub(super) fn preload_local(&self, settings: &Settings) {
        let Some(spec) = settings.local_spec() else {
            return;
        };
        if self.model.local().is_none() {
            return;
        }
        let Some(spawn) = self.jobs.spawner() else {
            return;
        };
        let core = self.for_every_page();
        spawn(Box::pin(async move {
            // A failure is reported by its `model_progress` event.
            let _ = core.load_local(&spec).await;
        }));
    }

    /// Serve `load_local_model`: load the model the settings name.
    pub(super) async fn load_local_model(&self) -> Result<LocalInfo, Error> {
        self.ensure_settings().await?;
        let settings = self.settings.get();
        let spec = settings.local_spec().ok_or_else(|| {
            Error::NoModel(
                "no model in the browser is configured: set the provider to local and the model to the URL of a .gguf file"
                    .into(),
            )
        })?;
        self.load_local(&spec).await
    }

    /// Serve `local_models`: the model files the browser keeps.
    pub(super) async fn local_models(&self) -> Result<LocalModels, Error> {
        let Some(runtime) = self.model.local() else {
            return Ok(LocalModels {
                available: false,
                models: Vec::new(),
                total: 0,
            });
        };
        let stored = runtime.stored().await.map_err(StoreError::Failed)?;
        let loaded = self.model.loaded().map(|info| info.url);
        let models: Vec<LocalModelView> = stored
            .into_iter()
            .map(|m| LocalModelView {
                loaded: loaded.as_deref() == Some(m.url.as_str()),
                url: m.url,
                size: m.size,
            })
            .collect();
        Ok(LocalModels {
            available: true,
            total: models.iter().map(|m| m.size).sum(),
            models,
        })
    }

    /// Serve `delete_local_model`: delete a kept model file (unloading it if loaded).
    pub(super) async fn delete_local_model(
        &self,
        p: DeleteLocalModel,
    ) -> Result<LocalModelDeleted, Error> {
        let url = p.url.trim();
        if url.is_empty() {
            return Err(invalid("delete_local_model", "'url' must not be empty"));
        }
        let runtime = self.local_runtime()?;
        let deleted = runtime.delete(url).await.map_err(StoreError::Failed)?;
        if self.model.loaded().is_some_and(|info| info.url == url) {
            self.model.set_loaded(None);
        }
        Ok(LocalModelDeleted { deleted })
    }

    /// The bytes the browser's kept model files take, if this core runs models there.
    pub(super) async fn local_model_bytes(&self) -> Option<u64> {
        let runtime = self.model.local()?;
        let stored = runtime.stored().await.ok()?;
        Some(stored.iter().map(|m| m.size).sum())
    }
}
