package duckdb

import "github.com/tidemark-etl/tidemark/bookmark"

// TypeSQL returns DuckDB's spelling of t: the mapping the engine reads a
// recorded schema with, which the catalog's DuckDB DDL uses too, so that
// a catalog table reads the same in tidemark and in DuckDB.
func TypeSQL(t bookmark.Type) string { return duckType(t) }

// Ident quotes s as a DuckDB identifier.
func Ident(s string) string { return ident(s) }

// Literal quotes s as a DuckDB string literal.
func Literal(s string) string { return literal(s) }
