//go:build stress

package worker

import "fmt"

// checkLedger, in the stress build, verifies after every step of the loop that the ledger
// adds up (received = ended + open), and logs the first step after which it does not, with
// the ledger before and after it: the stress test's check at the end says only that a
// change was lost from the count, this says where.
func (s *branchState) checkLedger(step any) {
	now := s.ledgerNow()
	if !now.Balanced() && !s.ledgerCheck.reported {
		s.ledgerCheck.reported = true
		s.cfg.Log.Error(fmt.Errorf("the ledger does not add up after %T %v", step, step), "ledger check",
			"branch", s.cfg.Branch, "before", fmt.Sprintf("%+v", s.ledgerCheck.last), "after", fmt.Sprintf("%+v", now))
	}
	s.ledgerCheck.last = now
}
