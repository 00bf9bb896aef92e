// Package loopback hands out loopback addresses for servers that a process must name
// before it starts them (a flag of a child process, a webhook the operator binds later).
//
// Asking the kernel for port 0 and closing the listener is not enough on a loaded machine
// with many test processes: the kernel hands the same port out again — to the next such
// request or to an outgoing connection — before the server binds it. An Address here is
// therefore taken outside the kernel's ephemeral port range and reserved until the process
// exits, so that no two callers in any process of the machine get the same port while both
// live. On Linux the reservation is an abstract Unix socket named after the port: it is no
// file (nothing is left in any folder) and the kernel releases it when the process exits.
// Elsewhere only the check that the port can be bound remains.
package loopback
