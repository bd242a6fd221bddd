//! PANAMA: the bump-in-the-wire in-network aggregation accelerator (header parser,
//! per-job buffers, floating-point adder tree at line rate). Spec:
//! `shared/docs/PANAMA.md`.
