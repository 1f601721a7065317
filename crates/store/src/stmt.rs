//! A write statement as plain data: SQL with `$N` placeholders and its
//! arguments. The same value runs on PostgreSQL (through sqlx) and on the
//! SQLite writer thread, so each write is written once.
//!
//! Reads write their row limit into the SQL (`LIMIT {limit}`, an `i64`,
//! which cannot carry SQL) instead of binding it: SQLite compiles a
//! statement again at every run when its `LIMIT` is a bound parameter
//! (the planner may use the value), which was 7% of the gateway's CPU
//! under a burst (docs/performance.md). The value means what it meant
//! bound: SQLite reads a negative one as no limit, PostgreSQL refuses it.

use sqlx::postgres::{PgArguments, Postgres};

/// One argument. Nulls keep their type: PostgreSQL wants to know it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg {
    Text(Option<String>),
    Int(Option<i64>),
}

impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Arg::Text(Some(v.to_string()))
    }
}
impl From<String> for Arg {
    fn from(v: String) -> Self {
        Arg::Text(Some(v))
    }
}
impl From<&String> for Arg {
    fn from(v: &String) -> Self {
        Arg::Text(Some(v.clone()))
    }
}
impl From<Option<&str>> for Arg {
    fn from(v: Option<&str>) -> Self {
        Arg::Text(v.map(str::to_string))
    }
}
impl From<&Option<String>> for Arg {
    fn from(v: &Option<String>) -> Self {
        Arg::Text(v.clone())
    }
}
impl From<Option<String>> for Arg {
    fn from(v: Option<String>) -> Self {
        Arg::Text(v)
    }
}
impl From<i64> for Arg {
    fn from(v: i64) -> Self {
        Arg::Int(Some(v))
    }
}
impl From<Option<i64>> for Arg {
    fn from(v: Option<i64>) -> Self {
        Arg::Int(v)
    }
}

/// A statement and its arguments (`$1` is `args[0]`).
#[derive(Debug, Clone)]
pub(crate) struct Stmt {
    pub sql: &'static str,
    pub args: Vec<Arg>,
    /// The statement must change a row, or the whole job fails (and
    /// changes nothing): a condition checked inside the transaction.
    pub required: bool,
}

/// What a job fails with when a required statement changed nothing.
pub(crate) const NOT_CHANGED: &str = "a condition of the write no longer holds";

impl Stmt {
    pub(crate) fn new(sql: &'static str) -> Self {
        Self {
            sql,
            args: Vec::new(),
            required: false,
        }
    }

    pub(crate) fn bind(mut self, arg: impl Into<Arg>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// The job fails unless this statement changes a row.
    pub(crate) fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// The statement as a sqlx query for PostgreSQL (the arguments move
    /// into it).
    pub(crate) fn pg_query(self) -> sqlx::query::Query<'static, Postgres, PgArguments> {
        let mut q = sqlx::query(self.sql);
        for a in self.args {
            q = match a {
                Arg::Text(v) => q.bind(v),
                Arg::Int(v) => q.bind(v),
            };
        }
        q
    }
}

/// `$1`..`$32` without formatting them for every argument.
const PLACEHOLDERS: [&str; 32] = [
    "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "$10", "$11", "$12", "$13", "$14", "$15", "$16", "$17",
    "$18", "$19", "$20", "$21", "$22", "$23", "$24", "$25", "$26", "$27", "$28", "$29", "$30", "$31", "$32",
];

/// Bind `args` to a prepared SQLite statement: `$N` is `args[N-1]`
/// wherever it stands (SQLite numbers named parameters by first
/// appearance, which need not be N).
pub(crate) fn bind_sqlite(st: &mut rusqlite::Statement<'_>, args: &[Arg]) -> rusqlite::Result<()> {
    for (i, arg) in args.iter().enumerate() {
        let owned;
        let name = match PLACEHOLDERS.get(i) {
            Some(n) => *n,
            None => {
                owned = format!("${}", i + 1);
                &owned
            }
        };
        let index = st
            .parameter_index(name)?
            .ok_or_else(|| rusqlite::Error::InvalidParameterName(name.to_string()))?;
        let bound = match arg {
            Arg::Text(Some(s)) => st.raw_bind_parameter(index, s.as_str()),
            Arg::Int(Some(n)) => st.raw_bind_parameter(index, *n),
            Arg::Text(None) | Arg::Int(None) => st.raw_bind_parameter(index, rusqlite::types::Null),
        };
        bound?;
    }
    Ok(())
}
