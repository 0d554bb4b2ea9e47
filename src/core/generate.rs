//! Tool calls that need a nested model call: the generation tools (`rewrite_selection`,
//! `continue_writing`, `suggest_dialogue`) and the reading `run_analysis` adds to its local
//! figures.
//!
//! A generation call runs in three steps, none holding the session across an await:
//! 1. plan: validate the arguments and read what the call needs (the selection, the text
//!    around the cursor) at the chapter's current version; nothing changes;
//! 2. the nested model call (abortable; the writer may keep typing meanwhile);
//! 3. apply: the answer becomes one command through the normal edit path (history entry with
//!    the call id and origin, saved, announced), rebased over whatever changed since step 1,
//!    so nothing the writer typed meanwhile is lost; or result data (suggestions).
//!
//! A failure at any step is the call's error result and changes nothing.

use futures_util::future::{select, Either};
use serde_json::json;
use serde_json::Value;

use super::{Core, On, Touched};
use crate::agent::AbortSignal;
use crate::commands::history::Applied;
use crate::commands::Origin;
use crate::error::Error;
use crate::llm::client::call_model;
use crate::llm::{build_request, Message, RequestOptions};
use crate::persist;
use crate::session::ToolCall;
use crate::tools::generation::{self, Finished, GenerationPlan};
use crate::tools::{ResultMeta, ToolError, ToolResult};

/// Why a nested model call gave no text.
pub(super) enum NestedError {
    Aborted,
    Failed(String),
}

impl Core {
    /// Whether a model is configured (and this core can call one).
    pub(super) fn model_configured(&self) -> bool {
        self.llm().is_some() && self.settings.read(|s| s.provider_config().is_ok())
    }

    /// One model call without tools: the plan's prompts in, the answer's text out.
    async fn nested_call(
        &self,
        plan: &GenerationPlan,
        abort: Option<&AbortSignal>,
    ) -> Result<String, NestedError> {
        self.nested_text(&plan.system, &plan.prompt, plan.max_tokens, abort)
            .await
    }

    /// One model call without tools: a fixed system prompt and a prompt in, the answer's
    /// text out (the generation tools, the bedside plan, the idle thinker).
    pub(super) async fn nested_text(
        &self,
        system: &str,
        prompt: &str,
        max_tokens: u32,
        abort: Option<&AbortSignal>,
    ) -> Result<String, NestedError> {
        self.ensure_settings()
            .await
            .map_err(|e| NestedError::Failed(e.to_string()))?;
        let settings = self.settings.get();
        let provider = self
            .model_config(&settings)
            .await
            .map_err(NestedError::Failed)?;
        let llm = self.llm().ok_or_else(|| {
            NestedError::Failed("this core was built without a way to call models".into())
        })?;
        let transport = self.model.transport(provider.kind).ok_or_else(|| {
            NestedError::Failed(
                "this core cannot run models in the browser (the local provider needs the worker's wllama runtime)"
                    .into(),
            )
        })?;
        let request = build_request(
            &provider,
            &[Message::system(system), Message::user(prompt)],
            &[],
            &RequestOptions {
                stream: true,
                max_tokens: Some(max_tokens),
                temperature: settings.temperature,
                ..RequestOptions::default()
            },
        );
        let options = super::local::call_options(&settings, provider.kind);
        let now = || self.env.clock.now_ms();
        let mut jitter = || self.next_jitter();
        let mut ignore = |_: crate::llm::StreamEvent| {};
        let called = {
            let call = std::pin::pin!(call_model(
                transport.as_ref(),
                llm.sleeper.as_ref(),
                provider.kind,
                &request,
                options,
                &now,
                &mut jitter,
                &mut ignore,
            ));
            let aborted = match abort {
                Some(signal) => Either::Left(signal.aborted()),
                None => Either::Right(std::future::pending()),
            };
            match select(call, aborted).await {
                Either::Left((called, _)) => called,
                Either::Right(_) => return Err(NestedError::Aborted),
            }
        };
        let answer = called
            .map_err(|e| NestedError::Failed(settings.redact(&e.to_string())))?
            .answer;
        if let Some(error) = answer.error {
            return Err(NestedError::Failed(format!(
                "the model's answer broke off: {}",
                settings.redact(&error)
            )));
        }
        Ok(answer.text)
    }

    /// Run a generation tool call on `project`.
    pub(super) async fn execute_generation(
        &self,
        project: &str,
        call: ToolCall,
        origin: Origin,
        abort: Option<&AbortSignal>,
        ctx: &super::CallCtx,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        let started = self.env.clock.now_ms();
        let digest = persist::digest(&call.args.to_string());
        let (name, call_id) = (call.name.clone(), call.id.clone());
        let hold = ctx.hold.as_deref();
        let planned = self.with_project(project, |s| {
            Ok(generation::plan(&self.registry, &call.name, call.args, s))
        })?;
        let failure = |error: ToolError| {
            let meta = ResultMeta {
                execution_time_ms: self.env.clock.now_ms().saturating_sub(started),
                ..ResultMeta::default()
            };
            ToolResult::error(&error, meta)
        };
        let plan = match planned {
            Ok(plan) => plan,
            Err(error) => {
                let result = failure(error);
                return self
                    .audit_only(project, &name, call_id, digest, origin, result, hold)
                    .await;
            }
        };
        let text = match self.nested_call(&plan, abort).await {
            Ok(text) => text,
            Err(NestedError::Aborted) => {
                let result = crate::agent::aborted_result();
                return self
                    .audit_only(project, &name, call_id, digest, origin, result, hold)
                    .await;
            }
            Err(NestedError::Failed(message)) => {
                let result = failure(ToolError::new(
                    "failed",
                    format!("The model call for '{name}' failed: {message}"),
                ));
                return self
                    .audit_only(project, &name, call_id, digest, origin, result, hold)
                    .await;
            }
        };
        match generation::finish(plan.finish, &text) {
            Err(error) => {
                let result = failure(error);
                self.audit_only(project, &name, call_id, digest, origin, result, hold)
                    .await
            }
            Ok(Finished::Data(data)) => {
                let meta = ResultMeta {
                    execution_time_ms: self.env.clock.now_ms().saturating_sub(started),
                    ..ResultMeta::default()
                };
                let result = ToolResult::success(data, meta);
                self.audit_only(project, &name, call_id, digest, origin, result, hold)
                    .await
            }
            Ok(Finished::Command(command)) => {
                self.mutate_on(On::project(project).held(hold), |s| {
                    let outcome = s.execute_command_with(
                        call_id.clone(),
                        &name,
                        command,
                        origin.clone(),
                        self.env.clock.as_ref(),
                        self.env.ids.as_ref(),
                        crate::session::CallExtras {
                            group: ctx.group.as_deref(),
                            ..Default::default()
                        },
                    );
                    self.after_call(s, &name, call_id, digest, origin, outcome)
                })
                .await
            }
        }
    }

    /// Add the model's reading to a successful `run_analysis` result, when asked for.
    pub(super) async fn interpret_analysis(
        &self,
        result: &mut ToolResult,
        abort: Option<&AbortSignal>,
    ) {
        let plan = generation::interpretation_plan(&result.data);
        let reading = match self.nested_call(&plan, abort).await {
            Ok(text) => match generation::finish(plan.finish, &text) {
                Ok(Finished::Data(data)) => data["interpretation"].clone(),
                Ok(Finished::Command(_)) => json!({"error": "unexpected edit"}),
                Err(e) => json!({ "error": e.message }),
            },
            Err(NestedError::Aborted) => json!({"error": "aborted"}),
            Err(NestedError::Failed(message)) => json!({ "error": message }),
        };
        if let Value::Object(data) = &mut result.data {
            data.insert("interpretation".into(), reading);
        }
    }

    /// Record a call that edited nothing: its audit record only (under a job unit's
    /// `hold`, if any).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn audit_only(
        &self,
        project: &str,
        tool: &str,
        call_id: Option<String>,
        args_digest: String,
        origin: Origin,
        result: ToolResult,
        hold: Option<&str>,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        let call = (tool, call_id, args_digest);
        self.audit_with(project, call, origin, result, hold, Vec::new())
            .await
    }

    /// [`Core::audit_only`], with meta records (approvals) saved in the same batch. `call`:
    /// the tool, the call's id and the digest of its arguments.
    pub(super) async fn audit_with(
        &self,
        project: &str,
        (tool, call_id, args_digest): (&str, Option<String>, String),
        origin: Origin,
        result: ToolResult,
        hold: Option<&str>,
        meta_puts: Vec<super::records::MetaRecord>,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        let audit = self.audit_record(project, tool, call_id, args_digest, &origin, &result);
        self.mutate_on(On::project(project).held(hold), |_| {
            Ok((
                (result, Vec::new()),
                Touched {
                    audit: Some(audit),
                    meta_puts,
                    ..Touched::default()
                },
            ))
        })
        .await
    }
}
