//! A Python host driver made from a register map: `register_map.py`, a module with
//! one class for the register file. The class takes any object with
//! `read(offset)` / `write(offset, value)` (a `pynq.MMIO` is one) and offers every
//! register as a property, bit fields as attributes of the value read, commands and
//! counter clears as methods; the module needs only Python 3's standard library.

use super::regmap::bit_range;
use super::spec::Family;
use crate::GenError;
use hdl::blocks::axil_regfile::{Access, RegisterEntry, RegisterMap};
use std::collections::BTreeMap;

/// Which helpers open the register window, besides the constructor taking any
/// MMIO object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PythonHost {
    /// A PYNQ board (Zynq, RFSoC): `from_pynq(base_addr)` builds a `pynq.MMIO`
    /// (importing `pynq` only when called).
    Pynq,
    /// A Linux host with the card on PCIe or a processor with `/dev/mem`:
    /// `from_dev_mem(base_addr, path="/dev/mem")` maps the window with `mmap`
    /// (`/dev/mem`, a UIO device or a PCIe BAR resource file).
    DevMem,
    /// Both helpers.
    Any,
}

impl PythonHost {
    /// The host a board family's designs are driven from: PYNQ for RFSoC boards,
    /// `/dev/mem` (or a PCIe BAR) for NetFPGA cards.
    pub fn for_family(family: Family) -> Self {
        match family {
            Family::Netfpga => PythonHost::DevMem,
            Family::Rfsoc => PythonHost::Pynq,
        }
    }

    fn pynq(self) -> bool {
        matches!(self, PythonHost::Pynq | PythonHost::Any)
    }

    fn dev_mem(self) -> bool {
        matches!(self, PythonHost::DevMem | PythonHost::Any)
    }
}

/// Python's keywords (3.7 and later): names that cannot be attributes.
const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Module-level names of the generated module.
const MODULE_NAMES: [&str; 19] = [
    "collections",
    "mmap",
    "os",
    "BLOCK",
    "ADDR_WIDTH",
    "DATA_WIDTH",
    "WINDOW_BYTES",
    "ID_VALUE",
    "Field",
    "Register",
    "AccessError",
    "IdMismatch",
    "DevMem",
    "FieldValue",
    "REGISTERS",
    "OFFSETS",
    "RESETS",
    "Driver",
    "_BY_NAME",
];

/// Names the driver class defines itself (reserved whatever the host).
const DRIVER_NAMES: [&str; 18] = [
    "mmio",
    "BLOCK",
    "ADDR_WIDTH",
    "DATA_WIDTH",
    "WINDOW_BYTES",
    "REGISTERS",
    "OFFSETS",
    "RESETS",
    "from_pynq",
    "from_dev_mem",
    "close",
    "read_register",
    "write_register",
    "read_all",
    "check_id",
    "_read",
    "_write",
    "_register",
];

/// Names every fields class defines itself.
const VALUE_NAMES: [&str; 7] = [
    "value", "REGISTER", "FIELDS", "field", "replace", "as_dict", "_field",
];

/// `name` as a Python identifier: every character that is not an ASCII letter, digit
/// or `_` becomes `_`; `r` is put in front of a name that is empty or starts with a
/// digit or `_` (no private or mangled names); `_` is put after a keyword.
fn py_ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit() || c == '_') {
        s.insert(0, 'r');
    }
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// `name` in CamelCase: split at every character that is not an ASCII letter or
/// digit, each part's first letter upper-cased; `R` in front if it would start with
/// a digit or be empty.
fn camel(name: &str) -> String {
    let mut s = String::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            s.push(first.to_ascii_uppercase());
            s.extend(chars);
        }
    }
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'R');
    }
    s
}

/// One namespace of the generated module: every name with what owns it, so that a
/// second owner is an error naming both.
struct Namespace<'a> {
    block: &'a str,
    taken: BTreeMap<String, String>,
}

impl<'a> Namespace<'a> {
    /// A namespace holding `fixed`, each owned by `owner` (e.g. "the driver's own").
    fn new(block: &'a str, fixed: &[&str], owner: &str) -> Self {
        let taken = fixed
            .iter()
            .map(|n| (n.to_string(), format!("{owner} `{n}`")))
            .collect();
        Namespace { block, taken }
    }

    /// Takes `name` for `what`, or names who has it.
    fn claim(&mut self, name: &str, what: String) -> Result<(), GenError> {
        if let Some(first) = self.taken.get(name) {
            return Err(GenError::PythonNameClash {
                block: self.block.to_string(),
                first: first.clone(),
                second: what,
                python_name: name.to_string(),
            });
        }
        self.taken.insert(name.to_string(), what);
        Ok(())
    }
}

/// What the driver calls one register.
struct PyRegister<'a> {
    /// The map's entry.
    r: &'a RegisterEntry,
    /// Index in `REGISTERS`.
    index: usize,
    /// Property or command method name.
    attr: String,
    /// The fields class (registers with fields) and each field's attribute name.
    fields: Option<(String, Vec<String>)>,
}

/// The Python names of `map`'s registers and fields; every clash is an error naming
/// both owners.
fn plan<'a>(map: &'a RegisterMap, class: &str) -> Result<Vec<PyRegister<'a>>, GenError> {
    let mut module = Namespace::new(&map.block, &MODULE_NAMES, "the module's own");
    module.claim(class, "the driver class".into())?;
    let mut driver = Namespace::new(&map.block, &DRIVER_NAMES, "the driver's own");
    let mut regs = Vec::new();
    for (index, r) in map.registers.iter().enumerate() {
        let attr = py_ident(&r.name);
        let what = format!("register `{}`", r.name);
        driver.claim(&attr, what.clone())?;
        if r.access == Access::ClearOnWrite && !r.command {
            driver.claim(
                &format!("clear_{attr}"),
                format!("the clear method of {what}"),
            )?;
        }
        let fields = if r.fields.is_empty() {
            None
        } else {
            if r.access == Access::ReadWrite {
                driver.claim(
                    &format!("update_{attr}"),
                    format!("the update method of {what}"),
                )?;
            }
            let class = format!("{}Fields", camel(&attr));
            module.claim(&class, format!("the fields class of {what}"))?;
            let mut ns = Namespace::new(&map.block, &VALUE_NAMES, "the fields class's own");
            let mut attrs = Vec::new();
            for f in &r.fields {
                let a = py_ident(&f.name);
                ns.claim(&a, format!("field `{}.{}`", r.name, f.name))?;
                attrs.push(a);
            }
            Some((class, attrs))
        };
        regs.push(PyRegister {
            r,
            index,
            attr,
            fields,
        });
    }
    Ok(regs)
}

/// `text` for inside a Python string literal: `\` and `"` escaped (in a docstring,
/// only a `"` before another or at the end), characters past ASCII as `\u`/`\U`
/// escapes, control characters as a space (docstrings) or as `\x` escapes.
fn escape(text: &str, docstring: bool) -> String {
    let mut s = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => s.push_str("\\\\"),
            // In a docstring a quote needs escaping only where it could end it.
            '"' if docstring && !matches!(chars.peek(), None | Some('"')) => s.push('"'),
            '"' => s.push_str("\\\""),
            c if c.is_ascii_control() => {
                if docstring {
                    s.push(' ');
                } else {
                    s.push_str(&format!("\\x{:02x}", c as u32));
                }
            }
            c if c.is_ascii() => s.push(c),
            c if (c as u32) <= 0xFFFF => s.push_str(&format!("\\u{:04x}", c as u32)),
            c => s.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    s
}

/// `text` as a Python string literal.
fn py_str(text: &str) -> String {
    format!("\"{}\"", escape(text, false))
}

/// The generated text, line by line.
struct Out {
    text: String,
}

impl Out {
    /// One line at `indent` levels of four spaces (an empty line has none).
    fn line(&mut self, indent: usize, text: &str) {
        if !text.is_empty() {
            self.text.push_str(&"    ".repeat(indent));
            self.text.push_str(text);
        }
        self.text.push('\n');
    }

    /// A docstring at `indent`: `paragraphs` escaped, wrapped at 72 columns, one
    /// empty line between them.
    fn doc(&mut self, indent: usize, paragraphs: &[String]) {
        let mut lines: Vec<String> = Vec::new();
        for (i, p) in paragraphs.iter().filter(|p| !p.is_empty()).enumerate() {
            if i > 0 {
                lines.push(String::new());
            }
            lines.extend(wrap(&escape(p, true), 72));
        }
        match lines.as_slice() {
            [] => self.line(indent, "\"\"\"\"\"\""),
            [one] => self.line(indent, &format!("\"\"\"{one}\"\"\"")),
            [first, rest @ ..] => {
                self.line(indent, &format!("\"\"\"{first}"));
                for l in rest {
                    self.line(indent, l);
                }
                self.line(indent, "\"\"\"");
            }
        }
    }
}

/// `text` in lines of at most `width` characters, broken at spaces (a longer word
/// stands on its own line).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The access type as the driver (and the JSON map) spells it.
fn access_name(access: Access) -> &'static str {
    match access {
        Access::ReadWrite => "read_write",
        Access::ReadOnly => "read_only",
        Access::ClearOnWrite => "clear_on_write",
    }
}

/// The read-only `id` register's expected value, if the map has one.
fn id_value(map: &RegisterMap) -> Option<u32> {
    map.registers
        .iter()
        .find(|r| r.name == "id" && r.access == Access::ReadOnly)
        .map(|r| r.reset)
}

/// The register map as a Python 3 module (`register_map.py`): constants (`BLOCK`,
/// `ADDR_WIDTH`, `WINDOW_BYTES`, `REGISTERS`, `OFFSETS`, `RESETS`, `ID_VALUE` if there
/// is a read-only `id`), a fields class per register with bit fields, and the driver
/// class named after `prefix` in CamelCase (the block name if empty; also bound to
/// `Driver`) with the helpers of `host`. Register and field names become Python
/// identifiers (see the README); two that become the same name, or a name the module
/// uses itself, are an error naming both. The same map gives the same text.
pub fn register_map_python(
    map: &RegisterMap,
    prefix: &str,
    host: PythonHost,
) -> Result<String, GenError> {
    let class = camel(if prefix.is_empty() {
        &map.block
    } else {
        prefix
    });
    let regs = plan(map, &class)?;
    let mut out = Out {
        text: String::new(),
    };
    module_head(&mut out, map, &regs, &class, host);
    out.text.push_str(PRELUDE);
    register_table(&mut out, &regs);
    for reg in &regs {
        fields_class(&mut out, reg);
    }
    driver_class(&mut out, map, &regs, &class, host);
    out.line(0, "");
    out.line(0, "");
    out.line(0, "#: The driver class under a fixed name.");
    out.line(0, &format!("Driver = {class}"));
    Ok(out.text)
}

/// The module docstring (with an example for `host`), imports and constants.
fn module_head(
    out: &mut Out,
    map: &RegisterMap,
    regs: &[PyRegister],
    class: &str,
    host: PythonHost,
) {
    out.doc(
        0,
        &[
            format!(
                "Driver of the register file `{}`, generated by wirespeed from its register \
                 map. Do not edit.",
                map.block
            ),
            format!(
                "AXI-Lite slave, {}-bit address ({} bytes), {}-bit data; registers are \
                 right-aligned in their word. Needs only the Python 3 standard library.",
                map.addr_width,
                1u64 << map.addr_width,
                map.data_width
            ),
        ],
    );
    out.text.push_str("\n# Example:\n#\n");
    for l in example(regs, class, host) {
        out.text
            .push_str(&format!("#     {l}\n").replace("#     \n", "#\n"));
    }
    out.line(0, "");
    for l in ["import collections", "import mmap", "import os", ""] {
        out.line(0, l);
    }
    out.line(0, "#: Name of the register file module.");
    out.line(0, &format!("BLOCK = {}", py_str(&map.block)));
    out.line(0, "#: AXI-Lite address width (bits).");
    out.line(0, &format!("ADDR_WIDTH = {}", map.addr_width));
    out.line(0, "#: AXI-Lite data width (bits).");
    out.line(0, &format!("DATA_WIDTH = {}", map.data_width));
    out.line(0, "#: Size of the register window (bytes).");
    out.line(0, &format!("WINDOW_BYTES = {}", 1u64 << map.addr_width));
    if let Some(id) = id_value(map) {
        out.line(0, "#: What the read-only `id` register holds.");
        out.line(0, &format!("ID_VALUE = 0x{id:08X}"));
    }
}

/// Example lines for the module's comment.
fn example(regs: &[PyRegister], class: &str, host: PythonHost) -> Vec<String> {
    let mut lines = vec![format!("from register_map import {class}"), String::new()];
    if host.pynq() {
        lines.push("# On a PYNQ board, at the block's base address in the Vivado design:".into());
        lines.push(format!("drv = {class}.from_pynq(0xA0000000)"));
    }
    if host.dev_mem() {
        lines.push("# On a Linux host: physical address through /dev/mem (root) ...".into());
        lines.push(format!("drv = {class}.from_dev_mem(0xA0000000)"));
        lines.push("# ... or an offset in a PCIe BAR (or a UIO device) of the card:".into());
        lines.push(format!(
            "drv = {class}.from_dev_mem(0x0, path=\"/sys/bus/pci/devices/0000:01:00.0/resource0\")"
        ));
    }
    lines.push("# Or over any object with read(offset) and write(offset, value):".into());
    lines.push(format!("drv = {class}(mmio)"));
    lines.push(String::new());
    if regs
        .iter()
        .any(|r| r.r.name == "id" && r.r.access == Access::ReadOnly)
    {
        lines.push("drv.check_id()".into());
    }
    if let Some(r) = regs.iter().find(|r| r.r.access == Access::ReadWrite) {
        lines.push(format!("drv.{} = 0x{:X}", r.attr, r.r.reset));
    }
    if let Some(r) = regs.iter().find(|r| r.fields.is_some()) {
        if let Some((_, fields)) = &r.fields {
            lines.push(format!("print(drv.{}.{})", r.attr, fields[0]));
        }
    }
    if let Some(r) = regs.iter().find(|r| r.r.command) {
        lines.push(format!("drv.{}()", r.attr));
    }
    lines.push("print(drv.read_all())".into());
    lines
}

/// The helpers every driver module has: errors, `DevMem`, the fields base class.
const PRELUDE: &str = r#"
#: One bit field: the map's name, the Python attribute, lowest bit, width, text.
Field = collections.namedtuple("Field", "name attr lsb width description")
#: One register: the map's name, the Python name, byte offset, width (bits),
#: access ("read_write", "read_only" or "clear_on_write"), reset value, whether a
#: write is a command, its fields and its description.
Register = collections.namedtuple(
    "Register", "name attr offset width access reset command fields description"
)


class AccessError(Exception):
    """A write the register map does not allow: to a read-only register, or a value
    that does not fit the register or field."""


class IdMismatch(RuntimeError):
    """The `id` register does not hold the value this driver was generated for."""


class DevMem(object):
    """An MMIO window over a memory-mapped file: `/dev/mem` at a physical address,
    a UIO device (`/dev/uioN`) or a PCIe BAR resource file
    (`/sys/bus/pci/devices/<device>/resourceN`, address = offset in the BAR).

    Every access is one aligned 32-bit load or store in the host's byte order
    (little-endian on x86 and Arm). Needs read-write access to the file (root for
    `/dev/mem`)."""

    def __init__(self, path, base_addr=0, size=WINDOW_BYTES):
        if base_addr % 4 or size % 4 or base_addr < 0 or size <= 0:
            raise ValueError(
                "base address %#x and size %d must be positive multiples of 4"
                % (base_addr, size)
            )
        start = base_addr - base_addr % mmap.ALLOCATIONGRANULARITY
        self._first = (base_addr - start) // 4
        self._size = size
        fd = os.open(path, os.O_RDWR | getattr(os, "O_SYNC", 0))
        try:
            self._map = mmap.mmap(
                fd,
                base_addr - start + size,
                mmap.MAP_SHARED,
                mmap.PROT_READ | mmap.PROT_WRITE,
                offset=start,
            )
        finally:
            os.close(fd)
        self._words = memoryview(self._map).cast("I")

    def _index(self, offset):
        if offset % 4 or not 0 <= offset < self._size:
            raise ValueError(
                "offset %#x is not a word of the %d-byte window" % (offset, self._size)
            )
        return self._first + offset // 4

    def read(self, offset):
        """The 32-bit word at byte `offset`."""
        return self._words[self._index(offset)]

    def write(self, offset, value):
        """Writes the 32-bit `value` at byte `offset`."""
        self._words[self._index(offset)] = value

    def close(self):
        """Unmaps the window."""
        self._words.release()
        self._map.close()


class FieldValue(object):
    """A register's value with named bit fields: each field is an attribute,
    `int(v)` or `v.value` the whole word; `replace(**fields)` gives a new value with
    fields changed. Compares equal to the same value of the same register or to an
    int."""

    __slots__ = ("value",)
    #: The register's name in the map.
    REGISTER = ""
    #: The register's fields (`Field`).
    FIELDS = ()

    def __init__(self, value=0):
        self.value = int(value)

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __eq__(self, other):
        if isinstance(other, FieldValue):
            return type(other) is type(self) and other.value == self.value
        return self.value == other

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        fields = ", ".join("%s=%d" % (f.attr, self.field(f.attr)) for f in self.FIELDS)
        return "%s(0x%08X: %s)" % (type(self).__name__, self.value, fields)

    @classmethod
    def _field(cls, attr):
        for f in cls.FIELDS:
            if f.attr == attr:
                return f
        raise AttributeError(
            "register %s has no field %r (it has %s)"
            % (cls.REGISTER, attr, ", ".join(f.attr for f in cls.FIELDS))
        )

    def field(self, attr):
        """The value of the field called `attr`."""
        f = self._field(attr)
        return (self.value >> f.lsb) & ((1 << f.width) - 1)

    def as_dict(self):
        """Every field's value, by attribute name, lowest bit first as in the map."""
        return collections.OrderedDict((f.attr, self.field(f.attr)) for f in self.FIELDS)

    def replace(self, **fields):
        """A new value with the given fields set (the others kept); a value that does
        not fit its field is an AccessError."""
        value = self.value
        for attr in sorted(fields):
            f = self._field(attr)
            v = int(fields[attr])
            if not 0 <= v < 1 << f.width:
                raise AccessError(
                    "%s.%s: %r does not fit %d bits" % (self.REGISTER, f.name, v, f.width)
                )
            mask = ((1 << f.width) - 1) << f.lsb
            value = (value & ~mask) | (v << f.lsb)
        return type(self)(value)
"#;

/// `REGISTERS`, `OFFSETS`, `RESETS` and the lookup by name.
fn register_table(out: &mut Out, regs: &[PyRegister]) {
    out.line(0, "");
    out.line(0, "");
    out.line(0, "#: Every register, in address order.");
    out.line(0, "REGISTERS = (");
    for reg in regs {
        let r = reg.r;
        out.line(1, "Register(");
        out.line(2, &format!("name={},", py_str(&r.name)));
        out.line(2, &format!("attr={},", py_str(&reg.attr)));
        out.line(2, &format!("offset=0x{:03X},", r.offset));
        out.line(2, &format!("width={},", r.width));
        out.line(2, &format!("access={},", py_str(access_name(r.access))));
        out.line(2, &format!("reset=0x{:X},", r.reset));
        out.line(
            2,
            &format!("command={},", if r.command { "True" } else { "False" }),
        );
        match &reg.fields {
            None => out.line(2, "fields=(),"),
            Some((_, attrs)) => {
                out.line(2, "fields=(");
                for (f, attr) in r.fields.iter().zip(attrs) {
                    out.line(
                        3,
                        &format!(
                            "Field({}, {}, {}, {}, {}),",
                            py_str(&f.name),
                            py_str(attr),
                            f.lsb,
                            f.width,
                            py_str(&f.description)
                        ),
                    );
                }
                out.line(2, "),");
            }
        }
        out.line(2, &format!("description={},", py_str(&r.description)));
        out.line(1, "),");
    }
    out.line(0, ")");
    out.line(0, "#: Byte offset of each register, by the map's name.");
    out.line(
        0,
        "OFFSETS = collections.OrderedDict((r.name, r.offset) for r in REGISTERS)",
    );
    out.line(0, "#: Reset value of each register, by the map's name.");
    out.line(
        0,
        "RESETS = collections.OrderedDict((r.name, r.reset) for r in REGISTERS)",
    );
    out.line(0, "_BY_NAME = dict((r.name, r) for r in REGISTERS)");
}

/// The fields class of a register with fields (nothing for one without).
fn fields_class(out: &mut Out, reg: &PyRegister) {
    let Some((class, attrs)) = &reg.fields else {
        return;
    };
    let r = reg.r;
    out.line(0, "");
    out.line(0, "");
    out.line(0, &format!("class {class}(FieldValue):"));
    out.doc(
        1,
        &[
            format!("The value of `{}` with its fields.", r.name),
            r.description.clone(),
        ],
    );
    out.line(0, "");
    out.line(1, "__slots__ = ()");
    out.line(1, &format!("REGISTER = {}", py_str(&r.name)));
    out.line(1, &format!("FIELDS = REGISTERS[{}].fields", reg.index));
    for (f, attr) in r.fields.iter().zip(attrs) {
        out.line(0, "");
        out.line(1, "@property");
        out.line(1, &format!("def {attr}(self):"));
        out.doc(
            2,
            &[format!("{} {}: {}", bit_range(f), f.name, f.description)],
        );
        out.line(
            2,
            &format!(
                "return (self.value >> {}) & 0x{:X}",
                f.lsb,
                f.mask() >> f.lsb
            ),
        );
    }
}

/// The driver's methods that do not depend on the map.
const DRIVER_COMMON: &str = r#"
    def close(self):
        """Closes the MMIO object if it can be closed (a `DevMem` is unmapped)."""
        close = getattr(self.mmio, "close", None)
        if close is not None:
            close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _register(self, name):
        reg = _BY_NAME.get(name)
        if reg is None:
            raise KeyError("%s has no register %r" % (BLOCK, name))
        return reg

    def _read(self, reg):
        return int(self.mmio.read(reg.offset))

    def _write(self, reg, value):
        if reg.access == "read_only":
            raise AccessError("%s: register %s is read-only" % (BLOCK, reg.name))
        value = int(value)
        width = reg.width if reg.access == "read_write" else DATA_WIDTH
        if not 0 <= value < 1 << width:
            raise AccessError(
                "%s: %r does not fit register %s (%d bits)" % (BLOCK, value, reg.name, width)
            )
        self.mmio.write(reg.offset, value)

    def read_register(self, name):
        """The value of the register called `name` in the map, as an int."""
        return self._read(self._register(name))

    def write_register(self, name, value):
        """Writes `value` to the register called `name` in the map. A read-only
        register, or a value that does not fit the register, is an AccessError
        (nothing is written); a clear-on-write register takes any 32-bit value."""
        self._write(self._register(name), value)

    def read_all(self):
        """Every register's value as an int, by the map's name, in address order
        (reading clears nothing)."""
        return collections.OrderedDict((r.name, self._read(r)) for r in REGISTERS)
"#;

/// The driver class: constructor, host helpers, generic access, `check_id` and one
/// set of members per register.
fn driver_class(
    out: &mut Out,
    map: &RegisterMap,
    regs: &[PyRegister],
    class: &str,
    host: PythonHost,
) {
    out.line(0, "");
    out.line(0, "");
    out.line(0, &format!("class {class}(object):"));
    out.doc(
        1,
        &[
            format!(
                "Driver of the register file `{}` ({} registers).",
                map.block,
                map.registers.len()
            ),
            "`mmio` is any object with `read(offset)`, returning the 32-bit word at byte \
             `offset` of the register window, and `write(offset, value)`: a `pynq.MMIO`, \
             a `DevMem`, or a test double."
                .into(),
        ],
    );
    out.line(0, "");
    for name in [
        "BLOCK",
        "ADDR_WIDTH",
        "DATA_WIDTH",
        "WINDOW_BYTES",
        "REGISTERS",
        "OFFSETS",
        "RESETS",
    ] {
        out.line(1, &format!("{name} = {name}"));
    }
    out.line(0, "");
    out.line(1, "def __init__(self, mmio):");
    out.line(2, "self.mmio = mmio");
    if host.pynq() {
        out.line(0, "");
        out.line(1, "@classmethod");
        out.line(1, "def from_pynq(cls, base_addr):");
        out.doc(
            2,
            &[
                "The driver of the block at physical address `base_addr` on a PYNQ board, \
               over `pynq.MMIO` (imported here: the module itself needs only the standard \
               library)."
                    .into(),
            ],
        );
        out.line(2, "import pynq");
        out.line(0, "");
        out.line(2, "return cls(pynq.MMIO(base_addr, WINDOW_BYTES))");
    }
    if host.dev_mem() {
        out.line(0, "");
        out.line(1, "@classmethod");
        out.line(1, "def from_dev_mem(cls, base_addr, path=\"/dev/mem\"):");
        out.doc(
            2,
            &[
                "The driver of the block at `base_addr` in `path`, mapped with mmap: a \
               physical address in `/dev/mem` (root), or an offset in a UIO device or a \
               PCIe BAR resource file (`/sys/bus/pci/devices/<device>/resourceN`)."
                    .into(),
            ],
        );
        out.line(2, "return cls(DevMem(path, base_addr, WINDOW_BYTES))");
    }
    out.text.push_str(DRIVER_COMMON);
    if let Some(id) = id_value(map) {
        out.line(0, "");
        out.line(1, "def check_id(self):");
        out.doc(
            2,
            &[format!(
                "Reads `id` and returns it if it holds 0x{id:08X}; raises IdMismatch \
                 otherwise (wrong base address, another design, or no bitstream)."
            )],
        );
        out.line(2, "found = self.read_register(\"id\")");
        out.line(2, "if found != ID_VALUE:");
        out.line(3, "raise IdMismatch(");
        out.line(
            4,
            "\"%s: id reads 0x%08X, expected 0x%08X\" % (BLOCK, found, ID_VALUE)",
        );
        out.line(3, ")");
        out.line(2, "return found");
    }
    for reg in regs {
        register_members(out, reg);
    }
}

/// One line on where a register sits: access, width, offset, reset.
fn register_facts(r: &RegisterEntry) -> String {
    let access = match r.access {
        Access::ReadWrite => "Read-write",
        Access::ReadOnly => "Read-only",
        Access::ClearOnWrite if r.command => "Command: this method writes 1 (any value does)",
        Access::ClearOnWrite => "Read-only, cleared by any write",
    };
    let fields = if r.fields.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = r.fields.iter().map(|f| f.name.as_str()).collect();
        format!("; fields {}", names.join(", "))
    };
    format!(
        "{access}, {} bit{} at offset 0x{:03X}, reset 0x{:X}{fields}.",
        r.width,
        if r.width == 1 { "" } else { "s" },
        r.offset,
        r.reset
    )
}

/// A register's members: a property (with a setter if writable), `update_<name>` for
/// a writable register with fields, `clear_<name>` for a clear-on-write register, or
/// a method named after a command register.
fn register_members(out: &mut Out, reg: &PyRegister) {
    let r = reg.r;
    let (attr, i) = (&reg.attr, reg.index);
    let doc = [r.description.clone(), register_facts(r)];
    out.line(0, "");
    if r.command {
        out.line(1, &format!("def {attr}(self):"));
        out.doc(
            2,
            &[
                r.description.clone(),
                format!(
                    "{} Its read value: `read_register({})`.",
                    register_facts(r),
                    py_str(&r.name)
                ),
            ],
        );
        out.line(2, &format!("self._write(REGISTERS[{i}], 1)"));
        return;
    }
    out.line(1, "@property");
    out.line(1, &format!("def {attr}(self):"));
    out.doc(2, &doc);
    match &reg.fields {
        Some((class, _)) => out.line(2, &format!("return {class}(self._read(REGISTERS[{i}]))")),
        None => out.line(2, &format!("return self._read(REGISTERS[{i}])")),
    }
    match r.access {
        Access::ReadWrite => {
            out.line(0, "");
            out.line(1, &format!("@{attr}.setter"));
            out.line(1, &format!("def {attr}(self, value):"));
            out.line(2, &format!("self._write(REGISTERS[{i}], value)"));
            if reg.fields.is_some() {
                out.line(0, "");
                out.line(1, &format!("def update_{attr}(self, **fields):"));
                out.doc(
                    2,
                    &[format!(
                        "Reads `{}`, sets the given fields (the others kept) and writes \
                         it back; returns the value written.",
                        r.name
                    )],
                );
                out.line(2, &format!("value = self.{attr}.replace(**fields)"));
                out.line(2, &format!("self._write(REGISTERS[{i}], value)"));
                out.line(2, "return value");
            }
        }
        Access::ClearOnWrite => {
            out.line(0, "");
            out.line(1, &format!("def clear_{attr}(self):"));
            out.doc(
                2,
                &[format!(
                    "Clears `{}` (writes 0; any write clears it).",
                    r.name
                )],
            );
            out.line(2, &format!("self._write(REGISTERS[{i}], 0)"));
        }
        Access::ReadOnly => {}
    }
}
