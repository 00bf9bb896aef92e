//go:build stress

package worker

import "fmt"

// checkLedger, in the stress build, verifies after every step of the loop that the ledger
// adds up (received = ended + open), and panics at the first step after which it does not,
// naming the step's type and the ledger before and after it: the stress test's check at the
// end says only that a change was lost from the count, this says where, and a panic shows
// in CI whatever the test does with the operator's logs.
func (s *branchState) checkLedger(step any) {
	now := s.ledgerNow()
	if !now.Balanced() {
		name, ok := step.(string) // a message is named by its type: its documents stay out
		if !ok {
			name = fmt.Sprintf("%T", step)
		}
		panic(fmt.Sprintf("branch %s: the ledger does not add up after %s: before %+v, after %+v",
			s.cfg.Branch, name, s.ledgerCheck.last, now))
	}
	s.ledgerCheck.last = now
}
