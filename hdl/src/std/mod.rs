//! Reusable blocks written with the builder.
