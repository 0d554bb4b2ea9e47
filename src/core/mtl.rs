//! Machine translation: the core runs `translation_create_mtl_suggestion` (one `POST` of a
//! scene's line to the settings' LibreTranslate-compatible `mtlEndpoint`, through the same
//! transport as model calls) and answers `translation_check_mtl_available` with that
//! endpoint.
//!
//! A suggestion runs in three steps, none holding the session across an await: plan (check
//! the arguments, read the line; nothing changes), the HTTP call (abortable, with the
//! settings' connect and idle timeouts, no retries), and the result (data only: the agent
//! saves a translation with `translation_create_line`). A failure at any step is the call's
//! error result; every call is audited.

use futures_util::future::{select, Either, LocalBoxFuture};
use serde_json::json;
use serde_json::Value;

use super::{Core, On, Touched};
use crate::agent::AbortSignal;
use crate::commands::history::Applied;
use crate::commands::Origin;
use crate::error::Error;
use crate::llm::client::{ByteStream, LlmTransport, Sleeper, TransportError};
use crate::llm::HttpRequest;
use crate::persist;
use crate::session::{CallExtras, ToolCall};
use crate::tools::bible::language::{self, MtlPlan};
use crate::tools::{ResultMeta, ToolError, ToolResult};

/// The most bytes of an endpoint's answer read.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// Why there is no suggestion.
#[derive(Debug, Clone, PartialEq)]
pub enum MtlError {
    /// The abort signal fired first.
    Aborted,
    /// The request failed: the call's error (code `failed`, or the plan's error).
    Failed(ToolError),
}

async fn with_timeout<T>(sleeper: &dyn Sleeper, ms: u64, work: LocalBoxFuture<'_, T>) -> Option<T> {
    match select(work, sleeper.sleep(ms)).await {
        Either::Left((value, _)) => Some(value),
        Either::Right(_) => None,
    }
}

fn failed(message: String) -> ToolError {
    ToolError::new("failed", message)
}

/// The body of an answer, or why it could not be read.
async fn read_body(
    body: &mut dyn ByteStream,
    sleeper: &dyn Sleeper,
    idle_ms: u64,
    host: &str,
) -> Result<String, ToolError> {
    let mut bytes = Vec::new();
    loop {
        match with_timeout(sleeper, idle_ms, body.next_chunk()).await {
            Some(Some(Ok(chunk))) => {
                bytes.extend_from_slice(&chunk);
                if bytes.len() > MAX_ANSWER_BYTES {
                    return Err(failed(format!(
                        "The translation endpoint ({host}) sent more than {MAX_ANSWER_BYTES} bytes; that is not a translation of one line."
                    )));
                }
            }
            Some(None) => break,
            Some(Some(Err(TransportError::Network(e)))) => {
                return Err(failed(format!(
                    "The connection to the translation endpoint ({host}) dropped: {e}"
                )))
            }
            None => {
                return Err(failed(format!(
                    "The translation endpoint ({host}) stopped sending for {} s.",
                    idle_ms / 1000
                )))
            }
        }
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The endpoint's words in an error body: its `error` field, or the body, shortened.
fn endpoint_message(body: &str) -> String {
    let said = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error").map(|e| match e {
                Value::String(s) => s.clone(),
                Value::Object(o) => o
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| e.to_string(), str::to_string),
                other => other.to_string(),
            })
        });
    let text = said.unwrap_or_else(|| body.trim().to_string());
    let text: String = text.chars().take(300).collect();
    if text.is_empty() {
        "no details given".into()
    } else {
        text
    }
}

/// The suggestion in a 2xx answer: `translatedText` (and `detectedLanguage` if given).
fn suggestion_of(body: &str, host: &str) -> Result<(String, Option<Value>), ToolError> {
    let shown: String = body.trim().chars().take(200).collect();
    let value: Value = serde_json::from_str(body).map_err(|_| {
        failed(format!(
            "The translation endpoint ({host}) did not answer with JSON; it sent: {shown}. Is 'mtlEndpoint' the URL of a LibreTranslate-compatible /translate route?"
        ))
    })?;
    let text = match value.get("translatedText") {
        Some(Value::String(s)) => s.clone(),
        // An array answer (to an array `q`): its first item.
        Some(Value::Array(items)) => items
            .first()
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_default(),
        _ => {
            return Err(failed(format!(
                "The translation endpoint's answer ({host}) has no 'translatedText' string; it sent: {shown}"
            )))
        }
    };
    if text.trim().is_empty() {
        return Err(failed(format!(
            "The translation endpoint ({host}) answered with an empty translation."
        )));
    }
    Ok((text, value.get("detectedLanguage").cloned()))
}

impl Core {
    /// Run a machine-translation tool call ([`language::MTL_TOOLS`]) on `project`.
    pub(super) async fn execute_mtl(
        &self,
        project: &str,
        call: ToolCall,
        origin: Origin,
        abort: Option<&AbortSignal>,
        ctx: &super::CallCtx,
    ) -> Result<(ToolResult, Vec<Applied>), Error> {
        let hold = ctx.hold.as_deref();
        self.ensure_settings().await?;
        let endpoint = self.settings.read(|s| s.mtl_endpoint.clone());
        let started = self.env.clock.now_ms();
        let digest = persist::digest(&call.args.to_string());
        let (name, call_id) = (call.name.clone(), call.id.clone());
        if name != language::MTL_SUGGESTION {
            // A read: the normal edit path, with the endpoint to see.
            return self
                .mutate_on(On::project(project).held(hold), |s| {
                    let outcome = s.execute_with(
                        &*self.registry,
                        call,
                        origin.clone(),
                        self.env.clock.as_ref(),
                        self.env.ids.as_ref(),
                        CallExtras {
                            mtl_endpoint: Some(&endpoint),
                            ..CallExtras::default()
                        },
                    );
                    self.after_call(s, &name, call_id, digest, origin, outcome)
                })
                .await;
        }
        let planned = self.with_project(project, |s| {
            Ok(language::mtl_plan(
                &self.registry,
                call.args,
                s,
                Some(&endpoint),
            ))
        })?;
        let outcome = match planned {
            Ok(plan) => self
                .mtl_call(&plan, abort)
                .await
                .map(|(text, detected)| language::mtl_suggestion(&plan, &text, detected)),
            Err(error) => Err(MtlError::Failed(error)),
        };
        let meta = ResultMeta {
            execution_time_ms: self.env.clock.now_ms().saturating_sub(started),
            ..ResultMeta::default()
        };
        let result = match outcome {
            Ok(data) => ToolResult::success(data, meta),
            Err(MtlError::Aborted) => crate::agent::aborted_result(),
            Err(MtlError::Failed(error)) => ToolResult::error(&error, meta),
        };
        let audit = self.audit_record(project, &name, call_id, digest, &origin, &result);
        self.mutate_on(On::project(project).held(hold), |_| {
            Ok((
                (result, Vec::new()),
                Touched {
                    audit: Some(audit),
                    ..Touched::default()
                },
            ))
        })
        .await
    }
}

impl Core {
    /// [`suggest`] through this core's transport, with the settings' timeouts.
    async fn mtl_call(
        &self,
        plan: &MtlPlan,
        abort: Option<&AbortSignal>,
    ) -> Result<(String, Option<Value>), MtlError> {
        let llm = self.llm().ok_or_else(|| {
            MtlError::Failed(failed(
                "this core was built without a way to make HTTP requests".into(),
            ))
        })?;
        let settings = self.settings.get();
        let timeouts = (settings.connect_timeout_ms, settings.idle_timeout_ms);
        match suggest(
            llm.transport.as_ref(),
            llm.sleeper.as_ref(),
            plan,
            timeouts,
            abort,
        )
        .await
        {
            Err(MtlError::Failed(mut error)) => {
                error.message = settings.redact(&error.message);
                Err(MtlError::Failed(error))
            }
            other => other,
        }
    }
}

/// The `POST` of a plan's line to its endpoint (LibreTranslate's `{q, source, target,
/// format: "text"}`), within `timeouts` (connect, idle; ms) and until `abort`: the suggested
/// translation and the detected language, if the endpoint said. No retries.
pub async fn suggest(
    transport: &dyn LlmTransport,
    sleeper: &dyn Sleeper,
    plan: &MtlPlan,
    timeouts: (u64, u64),
    abort: Option<&AbortSignal>,
) -> Result<(String, Option<Value>), MtlError> {
    if abort.is_some_and(AbortSignal::is_aborted) {
        return Err(MtlError::Aborted);
    }
    let (connect_ms, idle_ms) = timeouts;
    let host = language::endpoint_host(&plan.endpoint);
    let request = HttpRequest {
        method: "POST".into(),
        url: plan.endpoint.clone(),
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("accept".into(), "application/json".into()),
        ],
        body: json!({
            "q": plan.source,
            "source": plan.source_lang,
            "target": plan.target_lang,
            "format": "text",
        })
        .to_string(),
    };
    let work = std::pin::pin!(async {
        let sent = with_timeout(sleeper, connect_ms, transport.send(&request)).await;
        let mut response = match sent {
            None => {
                return Err(failed(format!(
                    "The translation endpoint ({host}) did not answer within {} s.",
                    connect_ms / 1000
                )))
            }
            Some(Err(TransportError::Network(e))) => {
                return Err(failed(format!(
                    "Could not reach the translation endpoint ({host}): {e}. Check 'mtlEndpoint' in the settings."
                )))
            }
            Some(Ok(response)) => response,
        };
        let body = read_body(&mut *response.body, sleeper, idle_ms, &host).await?;
        if !(200..300).contains(&response.status) {
            return Err(failed(format!(
                "The translation endpoint ({host}) answered HTTP {}: {}",
                response.status,
                endpoint_message(&body)
            ))
            .with_details(json!({"status": response.status})));
        }
        suggestion_of(&body, &host)
    });
    let aborted = match abort {
        Some(signal) => Either::Left(signal.aborted()),
        None => Either::Right(std::future::pending()),
    };
    match select(work, aborted).await {
        Either::Left((found, _)) => found.map_err(MtlError::Failed),
        Either::Right(_) => Err(MtlError::Aborted),
    }
}
