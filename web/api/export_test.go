package api

// Bearer is bearer, for the fuzz target.
var Bearer = bearer
