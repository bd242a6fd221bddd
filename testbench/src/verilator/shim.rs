//! Generation of the C++ shim: `extern "C"` entry points around the Verilated model.
//!
//! The model class is always `Vdut` (Verilator runs with `--prefix Vdut`), so the shim
//! depends only on the port list and on whether tracing is compiled in. The shim hands
//! out each port's address once, through a generated `switch` over the port index, and
//! the Rust side then reads and writes the port's member in place, as a C++ test bench
//! does (`top->a = v`): a port access costs no call across the library boundary. The C++
//! type of each port (CData, SData, IData, QData or `VlWide<N>`) is picked up by overload
//! resolution on the member's declared type, and a `static_assert` per port checks it
//! agrees with the width given in the port list, so a port list that does not match the
//! Verilog fails to compile with a message naming the port; the member's `sizeof`, also
//! exported, lets the Rust side check the layout it derives from the width at load.
//!
//! Wide ports (> 64 bits) are `VlWide<N>` in every Verilator 5.0xx. Their words are reached
//! with `.data()`, which all 5.0xx releases have; the implicit conversion `VlWide<N>` →
//! `WData*` that Debian's 5.006 also offers (and that older shims used) was removed in later
//! 5.0xx releases. Verilator 4 used plain `WData[N]` arrays; the
//! `VERILATOR_VERSION_INTEGER` guard selects the accessor.

use std::fmt::Write as _;

use super::{PortDirection, PortInfo};

/// Version of the C ABI the Rust side expects from `ws_abi_version()`.
pub(super) const ABI_VERSION: u32 = 4;

/// The C++ identifier Verilator gives a Verilog simple identifier.
///
/// Mirrors Verilator's `AstNode::encodeName` for the characters allowed in port names: a
/// double underscore becomes `___05F` (0x5F is `_`), so `a__b` is `a___05Fb` in C++.
pub(super) fn cpp_member_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '_' && chars.peek() == Some(&'_') {
            chars.next();
            out.push_str("___05F");
        } else {
            out.push(c);
        }
    }
    out
}

/// Generates the complete shim source for `ports`.
pub(super) fn generate(ports: &[PortInfo]) -> String {
    let mut s = String::with_capacity(8192 + ports.len() * 400);
    s.push_str(&PRELUDE.replace("@ABI_VERSION@", &ABI_VERSION.to_string()));
    push_port_checks(&mut s, ports);
    push_metadata(&mut s, ports);
    push_port_access(&mut s, ports);
    push_step(&mut s, ports);
    s.push_str(LIFECYCLE_AND_TRACE);
    s
}

/// `static_assert`s that each port's Verilated type fits the width from the port list.
fn push_port_checks(s: &mut String, ports: &[PortInfo]) {
    s.push_str("\n// ---- Port list vs. Verilated types\n");
    for p in ports {
        let m = cpp_member_name(&p.name);
        let _ = writeln!(
            s,
            "static_assert(WsPort<WS_T({m})>::fits({w}), \"port `{name}`: the port list says {w} \
             bits, which does not match the Verilated port type\");",
            w = p.width,
            name = p.name,
        );
    }
}

/// Port count, widths and directions, so the Rust side can check the library it loaded.
fn push_metadata(s: &mut String, ports: &[PortInfo]) {
    let widths: Vec<String> = ports.iter().map(|p| p.width.to_string()).collect();
    let inputs: Vec<&str> = ports
        .iter()
        .map(|p| {
            if p.direction == PortDirection::In {
                "1"
            } else {
                "0"
            }
        })
        .collect();
    let _ = write!(
        s,
        "\n// ---- Metadata\n\
         static const uint32_t ws_widths[] = {{{w}0}};\n\
         static const uint8_t ws_inputs[] = {{{i}0}};\n\
         WS_API uint32_t ws_port_count(void) {{ return {n}u; }}\n\
         WS_API uint32_t ws_port_width(uint32_t port) {{ return port < {n}u ? ws_widths[port] : 0u; }}\n\
         WS_API uint32_t ws_port_is_input(uint32_t port) {{ return port < {n}u ? ws_inputs[port] : 0u; }}\n",
        w = widths.iter().map(|w| format!("{w}u, ")).collect::<String>(),
        i = inputs.iter().map(|i| format!("{i}, ")).collect::<String>(),
        n = ports.len(),
    );
}

/// `ws_port_addr`: the address of each port's value inside one model (for a wide port,
/// its first 32-bit word), which the Rust side reads and writes directly; bad indices
/// give null. `ws_port_bytes`: the size of each port's Verilated member, which the Rust
/// side checks against the layout it derives from the width before it trusts an address.
fn push_port_access(s: &mut String, ports: &[PortInfo]) {
    s.push_str(
        "\n// ---- Port access\n\
         WS_API void* ws_port_addr(void* h, uint32_t port) {\n\
         \x20   Vdut& top = *static_cast<WsModel*>(h)->top;\n\
         \x20   (void)top;\n\
         \x20   switch (port) {\n",
    );
    for (i, p) in ports.iter().enumerate() {
        let m = cpp_member_name(&p.name);
        let _ = writeln!(s, "    case {i}: return WsPort<WS_T({m})>::addr(top.{m});");
    }
    s.push_str("    default: return nullptr;\n    }\n}\n");
    let sizes: String = ports
        .iter()
        .map(|p| format!("sizeof(WS_T({})), ", cpp_member_name(&p.name)))
        .collect();
    let _ = write!(
        s,
        "static const uint32_t ws_bytes[] = {{{sizes}0}};\n\
         WS_API uint32_t ws_port_bytes(uint32_t port) {{ return port < {n}u ? ws_bytes[port] : 0u; }}\n",
        n = ports.len(),
    );
}

/// `ws_step`: n full cycles of a 1-bit input clock (rise: 1, eval; fall: 0, eval), and
/// `ws_cycles`: n cycles in the other order (fall: 0, eval; rise: 1, eval), the order of
/// `sim::clock`, where a cycle ends on its rising edge.
fn push_step(s: &mut String, ports: &[PortInfo]) {
    push_clock_loop(s, ports, "ws_step", ("1", "0"));
    push_clock_loop(s, ports, "ws_cycles", ("0", "1"));
}

/// One n-cycle clock loop over every 1-bit input: `levels` are the clock's two values,
/// each followed by an eval.
fn push_clock_loop(s: &mut String, ports: &[PortInfo], name: &str, levels: (&str, &str)) {
    s.push_str(
        &"\n// ---- Clocking\n\
          WS_API int @NAME@(void* h, uint32_t port, uint64_t n) {\n\
          \x20   Vdut& top = *static_cast<WsModel*>(h)->top;\n\
          \x20   (void)top;\n\
          \x20   (void)n;\n\
          \x20   switch (port) {\n"
            .replace("@NAME@", name),
    );
    let (first, second) = levels;
    for (i, p) in ports.iter().enumerate() {
        if p.direction == PortDirection::In && p.width == 1 {
            let m = cpp_member_name(&p.name);
            let _ = writeln!(
                s,
                "    case {i}:\n\
                 \x20       for (uint64_t k = 0; k < n; ++k) {{\n\
                 \x20           top.{m} = {first}; top.eval();\n\
                 \x20           top.{m} = {second}; top.eval();\n\
                 \x20       }}\n\
                 \x20       return 0;"
            );
        }
    }
    s.push_str("    default: return -1;\n    }\n}\n");
}

/// Includes, the model holder and the per-type port addresses.
const PRELUDE: &str = r#"// Generated by wirespeed's Verilator bridge (testbench/src/verilator/shim.rs). Do not edit.
#include "Vdut.h"
#include "verilated.h"
#if VM_TRACE
#include "verilated_vcd_c.h"
#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#endif
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

#define WS_API extern "C" __attribute__((visibility("default")))
#define WS_T(member) std::remove_reference<decltype(std::declval<Vdut&>().member)>::type

namespace {

// One accessor per Verilated port type. `fits(w)`: a w-bit port gets this type;
// `addr(s)`: where the port's value starts.
template <typename T> struct WsPort;

template <typename T, uint32_t Lo, uint32_t Hi> struct WsNarrow {
    static constexpr bool fits(uint32_t w) { return Lo <= w && w <= Hi; }
    static void* addr(T& s) { return &s; }
};
template <> struct WsPort<CData> : WsNarrow<CData, 1, 8> {};
template <> struct WsPort<SData> : WsNarrow<SData, 9, 16> {};
template <> struct WsPort<IData> : WsNarrow<IData, 17, 32> {};
template <> struct WsPort<QData> : WsNarrow<QData, 33, 64> {};

// Wide ports: N words of 32 bits, least significant first.
#if defined(VERILATOR_VERSION_INTEGER) && VERILATOR_VERSION_INTEGER >= 5000000
// Verilator 5.0xx: VlWide<N>. Use .data(): present in 5.006 and in every later 5.0xx,
// unlike the implicit VlWide -> WData* conversion, which later releases removed.
template <std::size_t N> struct WsWideAccess {
    using Type = VlWide<N>;
    static EData* words(Type& s) { return s.data(); }
};
#define WS_WIDE_TYPE(N) VlWide<N>
#else
// Verilator 4: plain WData[N] arrays.
template <std::size_t N> struct WsWideAccess {
    using Type = WData[N];
    static WData* words(Type& s) { return &s[0]; }
};
#define WS_WIDE_TYPE(N) WData[N]
#endif

template <std::size_t N> struct WsPort<WS_WIDE_TYPE(N)> {
    using Access = WsWideAccess<N>;
    static constexpr bool fits(uint32_t w) { return w > 64 && (w + 31) / 32 == N; }
    static void* addr(typename Access::Type& s) { return Access::words(s); }
};

#if VM_TRACE
// The VCD writer's file. Verilator's own stops the process when a write fails
// (a full disk, a file size limit), and in 5.006 its fatal path waits forever
// for the lock the failing write holds. This one keeps the first error's errno,
// drops the rest of the trace and lets the simulation go on, so that closing
// the trace reports the error.
class WsVcdFile final : public VerilatedVcdFile {
    int m_fd = -1;
    int m_error = 0;

public:
    bool open(const std::string& name) override {
        m_fd = ::open(name.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0666);
        return m_fd >= 0;
    }
    void close() override {
        if (m_fd >= 0 && ::close(m_fd) != 0 && m_error == 0) m_error = errno;
        m_fd = -1;
    }
    ssize_t write(const char* bufp, ssize_t len) override {
        while (m_error == 0) {
            const ssize_t got = ::write(m_fd, bufp, len);
            if (got > 0) return got;
            if (got < 0 && errno == EINTR) continue;
            m_error = got < 0 ? errno : EIO;
        }
        return len;  // dropped: the trace is incomplete and closing says so
    }
    // The errno of the first failed write or close, or 0.
    int error() const { return m_error; }
};
#endif

// One simulation: its own context, the model and (optionally) a VCD writer and
// its file (declared first, so that it outlives the writer).
struct WsModel {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Vdut> top;
#if VM_TRACE
    std::unique_ptr<WsVcdFile> vcd_file;
    std::unique_ptr<VerilatedVcdC> vcd;
#endif
    WsModel() : ctx(new VerilatedContext) {
#if VM_TRACE
        ctx->traceEverOn(true);
#endif
        top.reset(new Vdut(ctx.get(), "TOP"));
    }
    // Closes the trace, if one is open; the errno of its first failed write, or 0.
    int close_trace() {
        int error = 0;
#if VM_TRACE
        if (vcd) {
            vcd->close();
            vcd.reset();
        }
        if (vcd_file) {
            error = vcd_file->error();
            vcd_file.reset();
        }
#endif
        return error;
    }
    ~WsModel() {
        close_trace();
        top->final();
        top.reset();
        ctx.reset();
    }
};

}  // namespace

WS_API uint32_t ws_abi_version(void) { return @ABI_VERSION@u; }
WS_API uint32_t ws_verilator_version(void) {
#ifdef VERILATOR_VERSION_INTEGER
    return VERILATOR_VERSION_INTEGER;
#else
    return 0u;
#endif
}
WS_API uint32_t ws_has_trace(void) { return VM_TRACE ? 1u : 0u; }
"#;

/// Create/destroy, eval, `$finish` status and VCD tracing.
const LIFECYCLE_AND_TRACE: &str = r#"
// ---- Lifecycle
WS_API void* ws_create(void) {
    try {
        return new WsModel;
    } catch (...) {
        return nullptr;
    }
}
WS_API void ws_destroy(void* h) { delete static_cast<WsModel*>(h); }
WS_API void ws_eval(void* h) { static_cast<WsModel*>(h)->top->eval(); }
WS_API uint32_t ws_got_finish(void* h) {
    return static_cast<WsModel*>(h)->ctx->gotFinish() ? 1u : 0u;
}

// ---- VCD trace (0: ok, -1: built without tracing, -2: cannot open)
WS_API int ws_trace_open(void* h, const char* path) {
#if VM_TRACE
    WsModel& m = *static_cast<WsModel*>(h);
    try {
        m.close_trace();
        m.vcd_file.reset(new WsVcdFile);
        m.vcd.reset(new VerilatedVcdC(m.vcd_file.get()));
        m.top->trace(m.vcd.get(), 99);
        m.vcd->open(path);
        if (!m.vcd->isOpen()) {
            m.close_trace();
            return -2;
        }
        return 0;
    } catch (...) {
        m.close_trace();
        return -2;
    }
#else
    (void)h;
    (void)path;
    return -1;
#endif
}
WS_API void ws_trace_dump(void* h, uint64_t time) {
#if VM_TRACE
    WsModel& m = *static_cast<WsModel*>(h);
    if (m.vcd) m.vcd->dump(time);
#else
    (void)h;
    (void)time;
#endif
}
// 0, or the errno of the trace's first failed write (the rest was dropped).
WS_API int ws_trace_close(void* h) { return static_cast<WsModel*>(h)->close_trace(); }
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_follow_verilator_encoding() {
        assert_eq!(cpp_member_name("clk"), "clk");
        assert_eq!(cpp_member_name("a_b"), "a_b");
        assert_eq!(cpp_member_name("a__b"), "a___05Fb");
        assert_eq!(cpp_member_name("a___b"), "a___05F_b");
        assert_eq!(cpp_member_name("_x"), "_x");
    }

    #[test]
    fn shim_has_one_case_per_port() {
        let ports = [
            PortInfo::input("clk", 1),
            PortInfo::input("a", 100),
            PortInfo::output("y", 7),
        ];
        let text = generate(&ports);
        assert!(text.contains("case 1: return WsPort<WS_T(a)>::addr(top.a);"));
        assert!(text.contains("case 2: return WsPort<WS_T(y)>::addr(top.y);"));
        assert!(text.contains("sizeof(WS_T(clk)), sizeof(WS_T(a)), sizeof(WS_T(y)), 0}"));
        assert!(text.contains("top.clk = 1; top.eval();"));
        assert!(text.contains("WS_API int ws_cycles(void* h, uint32_t port, uint64_t n)"));
        assert!(!text.contains("top.a = 1"));
    }
}
