//! The model settings in force, and whether they were read from the store yet.

use std::cell::{Cell, RefCell};

use crate::settings::Settings;

/// Owns the settings every run and tool call reads.
#[derive(Default)]
pub(in crate::core) struct SettingsState {
    settings: RefCell<Settings>,
    loaded: Cell<bool>,
}

impl SettingsState {
    /// Whether the stored settings were read (or are being read) already.
    pub(in crate::core) fn loaded(&self) -> bool {
        self.loaded.get()
    }

    /// Mark the stored settings as read; `true` if they were not marked before.
    pub(in crate::core) fn mark_loaded(&self) -> bool {
        !self.loaded.replace(true)
    }

    /// Put `settings` in force.
    pub(in crate::core) fn set(&self, settings: Settings) {
        *self.settings.borrow_mut() = settings;
    }

    /// A copy of the settings in force.
    pub(in crate::core) fn get(&self) -> Settings {
        self.settings.borrow().clone()
    }

    /// Read something of the settings in force.
    pub(in crate::core) fn read<T>(&self, f: impl FnOnce(&Settings) -> T) -> T {
        f(&self.settings.borrow())
    }
}
