//! Identifier rules shared by the builder and the back ends.

/// Verilog-2005 (and SystemVerilog) reserved words a name must not take.
const RESERVED: &[&str] = &[
    "always", "and", "assign", "automatic", "begin", "buf", "bufif0", "bufif1", "case", "casex",
    "casez", "cell", "cmos", "config", "deassign", "default", "defparam", "design", "disable",
    "edge", "else", "end", "endcase", "endconfig", "endfunction", "endgenerate", "endmodule",
    "endprimitive", "endspecify", "endtable", "endtask", "event", "for", "force", "forever",
    "fork", "function", "generate", "genvar", "highz0", "highz1", "if", "ifnone", "incdir",
    "include", "initial", "inout", "input", "instance", "integer", "join", "large", "liblist",
    "library", "localparam", "macromodule", "medium", "module", "nand", "negedge", "nmos", "nor",
    "noshowcancelled", "not", "notif0", "notif1", "or", "output", "parameter", "pmos", "posedge",
    "primitive", "pull0", "pull1", "pulldown", "pullup", "pulsestyle_ondetect",
    "pulsestyle_onevent", "rcmos", "real", "realtime", "reg", "release", "repeat", "rnmos",
    "rpmos", "rtran", "rtranif0", "rtranif1", "scalared", "showcancelled", "signed", "small",
    "specify", "specparam", "strong0", "strong1", "supply0", "supply1", "table", "task", "time",
    "tran", "tranif0", "tranif1", "tri", "tri0", "tri1", "triand", "trior", "trireg", "unsigned",
    "use", "uwire", "vectored", "wait", "wand", "weak0", "weak1", "while", "wire", "wor", "xnor",
    "xor", "bit", "logic", "byte", "int", "shortint", "longint", "string", "type", "struct",
    "union", "enum", "typedef", "interface", "class", "package", "import", "export", "final",
    "do", "break", "continue", "return", "void", "const", "static", "virtual", "priority",
    "unique", "alias", "chandle", "context", "extern", "local", "new", "null", "protected",
    "pure", "ref", "super", "this", "var", "with", "bind", "checker", "clocking", "constraint",
    "cover", "covergroup", "assert", "assume", "property", "sequence", "program", "rand",
    "randc", "solve", "inside", "dist", "wildcard", "foreach", "iff", "intersect", "first_match",
    "throughout", "within", "expect", "matches", "tagged", "timeprecision", "timeunit",
    "always_comb", "always_ff", "always_latch", "modport", "endinterface", "endpackage",
    "endclass", "endprogram", "endproperty", "endsequence", "endclocking", "endgroup",
];

/// True if `name` can be used as-is as a module, port, net or instance name:
/// `[A-Za-z_][A-Za-z0-9_]*`, not a reserved word, and not starting with `_n`
/// followed by a digit (the back ends' names for unnamed nets).
pub fn is_legal_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || first == '_') {
        return false;
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return false;
    }
    if is_generated_name(name) {
        return false;
    }
    !RESERVED.contains(&name)
}

/// True for the names back ends give unnamed nets (`_n` and digits).
pub fn is_generated_name(name: &str) -> bool {
    name.strip_prefix("_n")
        .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_identifiers_and_rejects_keywords_and_junk() {
        assert!(is_legal_identifier("axis_aclk"));
        assert!(is_legal_identifier("S_AXI_ARESETN"));
        assert!(is_legal_identifier("_x1"));
        assert!(!is_legal_identifier("module"));
        assert!(!is_legal_identifier("1abc"));
        assert!(!is_legal_identifier("a-b"));
        assert!(!is_legal_identifier(""));
        assert!(!is_legal_identifier("_n12"));
    }
}
