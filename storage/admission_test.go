//go:build integration

package storage_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/uptrace/bun"

	"parley/devstack/testenv"
	"parley/model"
	"parley/rules/billing"
	"parley/rules/jobspec"
	"parley/storage"
)

// admit admits a new transcription job; its id is 0 when it was refused.
func admit(ctx context.Context, db *bun.DB, accountID string, estimate billing.Micros) (int64, error) {
	j := model.Job{AccountID: accountID, Kind: jobspec.Transcription, Status: jobspec.Queued, InputKind: "file", Source: "api", LanguageRequested: "auto"}
	err := storage.Admissions{DB: db}.Admit(ctx, &j, estimate)
	return j.ID, err
}

func TestAdmissionConcurrentLimit(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc := newAccount(t, db, 1_000_000)

	var admitted, refused atomic.Int32
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := admit(ctx, db, acc.ID, 100)
			var tm *model.TooManyJobsError
			switch {
			case err == nil:
				admitted.Add(1)
			case errors.As(err, &tm):
				if tm.InFlight != 3 || tm.Limit != 3 {
					t.Errorf("details %+v, want inFlight 3 limit 3", tm)
				}
				refused.Add(1)
			default:
				t.Errorf("admit %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 3 || refused.Load() != 47 {
		t.Fatalf("admitted %d refused %d, want 3 and 47", admitted.Load(), refused.Load())
	}
	inFlight, limit, err := storage.Admissions{DB: db}.InFlight(ctx, acc.ID)
	if err != nil || inFlight != 3 || limit != 3 {
		t.Fatalf("InFlight = %d/%d, %v", inFlight, limit, err)
	}
}

func TestAdmissionReleaseFreesSlotAndReservation(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	acc := newAccount(t, db, 1000)
	adm := storage.Admissions{DB: db}
	first, err := admit(ctx, db, acc.ID, 800)
	if err != nil {
		t.Fatal(err)
	}
	// 800 of 1000 is reserved: a second job estimated at 300 does not fit.
	var ib *model.InsufficientBalanceError
	if _, err := admit(ctx, db, acc.ID, 300); !errors.As(err, &ib) || ib.Balance != 200 || ib.Required != 300 {
		t.Fatalf("err = %v, want insufficient balance 300 > 200", err)
	}
	if err := adm.Release(ctx, "transcription", first); err != nil {
		t.Fatal(err)
	}
	if err := adm.Release(ctx, "transcription", first); err != nil {
		t.Fatalf("second release: %v", err)
	}
	second, err := admit(ctx, db, acc.ID, 300)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if err := adm.Reserve(ctx, "transcription", second, 1200); !errors.As(err, &ib) {
		t.Fatalf("reserve beyond balance: %v", err)
	}
	if err := adm.Reserve(ctx, "transcription", second, 900); err != nil {
		t.Fatalf("reserve within balance: %v", err)
	}
}

func TestAdmissionPlatformCap(t *testing.T) {
	db := testenv.DB(t)
	ctx := context.Background()
	if err := (storage.Settings{DB: db}).Set(ctx, model.SettingPlatformConcurrentJobs, 2); err != nil {
		t.Fatal(err)
	}
	a := newAccount(t, db, 10_000)
	if _, err := admit(ctx, db, a.ID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := admit(ctx, db, a.ID, 0); err != nil {
		t.Fatal(err)
	}
	var tm *model.TooManyJobsError
	if _, err := admit(ctx, db, a.ID, 0); !errors.As(err, &tm) || !tm.Platform || tm.Limit != 2 {
		t.Fatalf("err = %v, want platform cap", err)
	}
}
