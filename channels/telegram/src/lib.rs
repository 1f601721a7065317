//! telegram adapter for Switchboard (issue pending): implements `switchboard_core::Channel`.
