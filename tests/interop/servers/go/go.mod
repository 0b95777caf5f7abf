module nodelay/interop/goserver

go 1.22

require golang.org/x/net v0.30.0

require golang.org/x/text v0.19.0 // indirect
