package sqlite

// Migration1 is the SQL of schema 1, for the migration test.
var Migration1 = migrations[0].sql
