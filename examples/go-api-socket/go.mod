module github.com/peercgroup/peercgroup/examples/go-api-socket

go 1.19

require github.com/peercgroup/peercgroup/bindings/go v0.0.0-00010101000000-000000000000

require golang.org/x/sys v0.3.0 // indirect

replace github.com/peercgroup/peercgroup/bindings/go => ../../bindings/go
