// Package loopback hands out loopback addresses for servers that a process must name
// before it starts them (a flag of a child process, a webhook the operator binds later).
//
// Asking the kernel for port 0 and closing the listener is not enough on a loaded machine
// with many test processes: the kernel hands the same port out again — to the next such
// request or to an outgoing connection — before the server binds it. An Address here is
// therefore taken outside the kernel's ephemeral range and reserved with a lock file held
// until the process exits, so no two callers in any process on the machine get the same
// port while both live.
package loopback
