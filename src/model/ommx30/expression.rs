//! OMMX 3.0's functions: the compact ones 2.9.3 has too ([`Function`]) and
//! expression functions, a postfix program of pushed atoms and operators
//! (`abs(x)`, `x / y`, `max(x, y)`, `powi(x, 3)`), read exactly as 3.0 reads
//! them: no folding, each pushed atom normalized like a compact function, a
//! program of one push is that atom as a compact function.
//!
//! Counted as 3.0 counts them: `Expression;Vec[stack]` 24, then per
//! instruction `Push;<atom>` (the atom as a function: `Zero`/`Constant` 40, or
//! its terms) or `Unary`/`Associative`/`Binary` 40 (`size_of::<Instruction>()`).

use crate::model::Function;
use crate::ommx_v1 as pb1;
use crate::profile::collections::{leaf, VEC};
use crate::profile::{LogicalMemoryProfile, LogicalMemoryVisitor, Noun, Path, Rule};

use super::V2Error;

/// One operator instruction of an expression.
pub const OPERATOR: Rule = Rule::fixed(
    "an expression operator instruction",
    Noun::new("instruction", "instructions"),
    40,
);

#[derive(Debug, Clone, PartialEq)]
pub enum Instruction {
    Push(Function),
    Unary,
    Associative,
    Binary,
}

/// A function as OMMX 3.0 holds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Func {
    Compact(Function),
    Expression(Vec<Instruction>),
}

impl Default for Func {
    fn default() -> Self {
        Func::Compact(Function::Zero)
    }
}

impl Func {
    /// Reads a wire function; `what` names it in errors.
    pub fn from_wire(f: &pb1::Function, what: &dyn Fn() -> String) -> Result<Self, V2Error> {
        use pb1::FunctionArm;
        let compact = |f: &pb1::Function| {
            Function::from_wire(f).map_err(|source| V2Error::Function {
                what: what(),
                source,
            })
        };
        match &f.function {
            None => Err(V2Error::EmptyFunction { what: what() }),
            Some(FunctionArm::Expression(e)) => program(e, &compact, what),
            Some(_) => compact(f).map(Func::Compact),
        }
    }

    pub fn for_each_variable(&self, mut f: impl FnMut(u64)) {
        match self {
            Func::Compact(c) => c.for_each_variable(f),
            Func::Expression(program) => {
                for i in program {
                    if let Instruction::Push(atom) = i {
                        atom.for_each_variable(&mut f);
                    }
                }
            }
        }
    }

    /// [`Func::for_each_variable`] in OMMX's order where it has one: a
    /// compact function's [`Function::for_each_variable_first`].
    pub fn for_each_variable_first(&self, f: impl FnMut(u64)) {
        match self {
            Func::Compact(c) => c.for_each_variable_first(f),
            Func::Expression(_) => self.for_each_variable(f),
        }
    }

    /// Whether OMMX's order of the function's variables is ascending (a
    /// linear function's, whose terms may be in file order: whoever needs
    /// that order sorts them).
    pub fn variables_ascend(&self) -> bool {
        matches!(self, Func::Compact(Function::Linear { .. }))
    }

    /// Stored terms over the function's atoms.
    pub fn stored_terms(&self) -> usize {
        match self {
            Func::Compact(c) => c.stored_terms(),
            Func::Expression(program) => program
                .iter()
                .map(|i| match i {
                    Instruction::Push(atom) => atom.stored_terms(),
                    _ => 0,
                })
                .sum(),
        }
    }

    /// The compact function, when it is one.
    pub fn compact(&self) -> Option<&Function> {
        match self {
            Func::Compact(c) => Some(c),
            Func::Expression(_) => None,
        }
    }
}

fn program(
    e: &pb1::function::Expression,
    compact: &dyn Fn(&pb1::Function) -> Result<Function, V2Error>,
    what: &dyn Fn() -> String,
) -> Result<Func, V2Error> {
    use pb1::function::expression::instruction::Instruction as Op;
    use pb1::FunctionArm;
    let invalid = |why: String| V2Error::Expression { what: what(), why };
    let mut out = Vec::with_capacity(e.instructions.len());
    let mut height = 0usize;
    for (index, instruction) in e.instructions.iter().enumerate() {
        let (parsed, needs) = match &instruction.instruction {
            None => return Err(invalid(format!("instruction {index} is empty"))),
            Some(Op::Constant(c)) => {
                let f = pb1::Function {
                    function: Some(FunctionArm::Constant(*c)),
                };
                (Instruction::Push(compact(&f)?), 0)
            }
            Some(Op::Linear(l)) => (
                Instruction::Push(compact(&pb1::Function {
                    function: Some(FunctionArm::Linear(l.clone())),
                })?),
                0,
            ),
            Some(Op::Quadratic(q)) => (
                Instruction::Push(compact(&pb1::Function {
                    function: Some(FunctionArm::Quadratic(q.clone())),
                })?),
                0,
            ),
            Some(Op::Polynomial(p)) => (
                Instruction::Push(compact(&pb1::Function {
                    function: Some(FunctionArm::Polynomial(p.clone())),
                })?),
                0,
            ),
            Some(Op::Unary(u)) => {
                let powi = u.operator == 4;
                if !(1..=4).contains(&u.operator) {
                    return Err(invalid(format!("unknown unary operator {}", u.operator)));
                }
                if powi != u.integer_exponent.is_some() {
                    return Err(invalid(
                        "integer_exponent is required by POWI and only valid there".into(),
                    ));
                }
                (Instruction::Unary, 1)
            }
            Some(Op::Associative(a)) => {
                if !(1..=4).contains(&a.operator) {
                    return Err(invalid(format!(
                        "unknown associative operator {}",
                        a.operator
                    )));
                }
                (Instruction::Associative, 2)
            }
            Some(Op::Binary(b)) => {
                if b.operator != 1 {
                    return Err(invalid(format!("unknown binary operator {}", b.operator)));
                }
                (Instruction::Binary, 2)
            }
        };
        if needs == 0 {
            height += 1;
        } else if height < needs {
            return Err(invalid(format!(
                "instruction {index} needs {needs} stack values, has {height}"
            )));
        } else if needs == 2 {
            height -= 1;
        }
        out.push(parsed);
    }
    if height != 1 {
        return Err(invalid(format!(
            "the program leaves {height} stack values, not one"
        )));
    }
    if let [Instruction::Push(_)] = out.as_slice() {
        let Some(Instruction::Push(atom)) = out.pop() else {
            unreachable!("matched above")
        };
        return Ok(Func::Compact(atom));
    }
    Ok(Func::Expression(out))
}

impl LogicalMemoryProfile for Func {
    fn visit_logical_memory<V: LogicalMemoryVisitor>(&self, path: &mut Path, visitor: &mut V) {
        match self {
            Func::Compact(f) => f.visit_logical_memory(path, visitor),
            Func::Expression(program) => {
                let mut p = path.with("Expression");
                leaf(&p.with("Vec[stack]"), visitor, &VEC);
                for i in program {
                    match i {
                        Instruction::Push(atom) => {
                            atom.visit_logical_memory(&mut p.with("Push"), visitor)
                        }
                        Instruction::Unary => leaf(&p.with("Unary"), visitor, &OPERATOR),
                        Instruction::Associative => {
                            leaf(&p.with("Associative"), visitor, &OPERATOR)
                        }
                        Instruction::Binary => leaf(&p.with("Binary"), visitor, &OPERATOR),
                    }
                }
            }
        }
    }
}
