module github.com/peercgroup/peercgroup/bindings/go

go 1.19

require golang.org/x/sys v0.3.0
