//! [`JsMcp`]: the [`McpRuntime`] over the worker's MCP bridge
//! (`packages/draftsmith/mcp-client.js`), which runs the official TypeScript SDK's client
//! (Streamable HTTP) for each configured server.
//!
//! Values cross as JS objects (serde-wasm-bindgen, JSON-compatible: objects, not `Map`s). A
//! call's future aborts its request (through an `AbortSignal`) when dropped before it settles:
//! the core drops it on the tool's timeout or when the run is aborted.

use std::cell::RefCell;
use std::collections::BTreeMap;

use futures_util::future::{FutureExt, LocalBoxFuture};
use js_sys::{Function, Promise};
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortController, AbortSignal};

use super::local::{message, settle};
use crate::mcp::{CallOutcome, McpRuntime, McpServer, McpTool, ToolsChanged};

#[wasm_bindgen]
extern "C" {
    /// The worker's MCP clients (`McpClients` of `mcp-client.js`).
    #[derive(Clone)]
    pub type McpBridge;

    #[wasm_bindgen(method, catch)]
    fn connect(this: &McpBridge, spec: JsValue, on_tools: &Function) -> Result<Promise, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn call(
        this: &McpBridge,
        server: &str,
        tool: &str,
        args: JsValue,
        signal: &AbortSignal,
    ) -> Result<Promise, JsValue>;

    #[wasm_bindgen(method, catch)]
    fn close(this: &McpBridge, name: &str) -> Result<Promise, JsValue>;
}

/// A server as the bridge takes it: with its headers' values.
#[derive(Serialize)]
struct BridgeSpec<'a> {
    name: &'a str,
    url: &'a str,
    headers: BTreeMap<&'a str, &'a str>,
}

/// A server's tool-list callback, as JS calls it.
type Listener = Closure<dyn FnMut(JsValue)>;

/// MCP servers reached through the worker's bridge.
pub struct JsMcp {
    bridge: McpBridge,
    /// Each connected server's tool-list callback, alive while its connection is.
    listeners: RefCell<BTreeMap<String, Listener>>,
}

impl JsMcp {
    /// The runtime over `bridge`.
    pub fn new(bridge: McpBridge) -> Self {
        Self {
            bridge,
            listeners: RefCell::new(BTreeMap::new()),
        }
    }
}

/// `value` as a plain JS value (objects as objects).
fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, String> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| e.to_string())
}

/// Aborts a request when dropped before [`Abort::disarm`].
struct Abort(Option<AbortController>);

impl Abort {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for Abort {
    fn drop(&mut self) {
        if let Some(controller) = self.0.take() {
            controller.abort();
        }
    }
}

impl McpRuntime for JsMcp {
    fn connect(
        &self,
        server: &McpServer,
        changed: ToolsChanged,
    ) -> LocalBoxFuture<'static, Result<Vec<McpTool>, String>> {
        let spec = to_js(&BridgeSpec {
            name: &server.name,
            url: &server.url,
            headers: server
                .headers
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_str()))
                .collect(),
        });
        let listener = Listener::new(move |tools: JsValue| {
            if let Ok(tools) = serde_wasm_bindgen::from_value::<Vec<McpTool>>(tools) {
                changed(tools);
            }
        });
        let promise = spec.map(|spec| self.bridge.connect(spec, listener.as_ref().unchecked_ref()));
        self.listeners
            .borrow_mut()
            .insert(server.name.clone(), listener);
        async move {
            let tools = settle(promise?).await?;
            serde_wasm_bindgen::from_value(tools)
                .map_err(|e| format!("the server listed its tools oddly: {e}"))
        }
        .boxed_local()
    }

    fn call(
        &self,
        server: &str,
        tool: &str,
        args: Value,
    ) -> LocalBoxFuture<'static, Result<CallOutcome, String>> {
        let bridge = self.bridge.clone();
        let (server, tool) = (server.to_string(), tool.to_string());
        async move {
            let controller = AbortController::new().map_err(message)?;
            let promise = bridge.call(&server, &tool, to_js(&args)?, &controller.signal());
            let abort = Abort(Some(controller));
            let answer = settle(promise).await;
            abort.disarm();
            serde_wasm_bindgen::from_value(answer?)
                .map_err(|e| format!("the server answered oddly: {e}"))
        }
        .boxed_local()
    }

    fn close(&self, server: &str) -> LocalBoxFuture<'static, ()> {
        let promise = self.bridge.close(server);
        let listener = self.listeners.borrow_mut().remove(server);
        async move {
            let _ = settle(promise).await;
            drop(listener);
        }
        .boxed_local()
    }
}
