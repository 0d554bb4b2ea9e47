//! The model client: how the core reaches models (a transport and a sleeper, and the runtime
//! of models in the browser), the model loaded there, and the jitter of its retry backoff.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use crate::llm::client::{LlmTransport, Sleeper};
use crate::llm::local::{LocalInfo, LocalRuntime};
use crate::llm::ProviderKind;

/// How the core reaches models: a transport and a sleeper (for backoff and timeouts).
pub struct Llm {
    /// Sends model requests.
    pub transport: Rc<dyn LlmTransport>,
    /// Waits.
    pub sleeper: Rc<dyn Sleeper>,
}

/// Owns the way to call models, if the embedder gave one, the runtime of models in the
/// browser and what it loaded, and the backoff jitter's state.
pub(in crate::core) struct ModelClient {
    llm: RefCell<Option<Rc<Llm>>>,
    local: RefCell<Option<Rc<dyn LocalRuntime>>>,
    loaded: RefCell<Option<LocalInfo>>,
    jitter: Cell<u64>,
}

impl Default for ModelClient {
    fn default() -> Self {
        Self {
            llm: RefCell::new(None),
            local: RefCell::new(None),
            loaded: RefCell::new(None),
            jitter: Cell::new(0x9e37_79b9_7f4a_7c15),
        }
    }
}

impl ModelClient {
    /// Call models through `llm` from now on.
    pub(in crate::core) fn set(&self, llm: Llm) {
        *self.llm.borrow_mut() = Some(Rc::new(llm));
    }

    /// The way to call models, if this core has one.
    pub(in crate::core) fn get(&self) -> Option<Rc<Llm>> {
        self.llm.borrow().clone()
    }

    /// Run `local` models through `runtime` from now on.
    pub(in crate::core) fn set_local(&self, runtime: Rc<dyn LocalRuntime>) {
        *self.local.borrow_mut() = Some(runtime);
    }

    /// The runtime of models in the browser, if this core has one.
    pub(in crate::core) fn local(&self) -> Option<Rc<dyn LocalRuntime>> {
        self.local.borrow().clone()
    }

    /// The transport for a provider of `kind`: the browser's runtime for `local`, else the
    /// network's; `None` when this core has no way to reach it.
    pub(in crate::core) fn transport(&self, kind: ProviderKind) -> Option<Rc<dyn LlmTransport>> {
        match kind {
            ProviderKind::Local => self.local().map(|r| r as Rc<dyn LlmTransport>),
            _ => self.get().map(|llm| Rc::clone(&llm.transport)),
        }
    }

    /// Remember what the runtime loaded (`None`: nothing, or it was deleted).
    pub(in crate::core) fn set_loaded(&self, info: Option<LocalInfo>) {
        *self.loaded.borrow_mut() = info;
    }

    /// The model the runtime loaded last.
    pub(in crate::core) fn loaded(&self) -> Option<LocalInfo> {
        self.loaded.borrow().clone()
    }

    /// The next backoff jitter in `[0, 1)`, mixed with `now_ms`.
    pub(in crate::core) fn next_jitter(&self, now_ms: u64) -> f64 {
        // xorshift64*: backoff jitter needs spread, not secrecy.
        let mut x = self.jitter.get() ^ now_ms;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.jitter.set(x);
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}
