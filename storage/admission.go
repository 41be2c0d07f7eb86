package storage

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"parley/model"
	"parley/rules/billing"
)

// jobAdmission is the slot a job holds from admission to its final state.
type jobAdmission struct {
	bun.BaseModel `bun:"table:job_admissions"`

	ID             int64          `bun:"id,pk,autoincrement"`
	AccountID      string         `bun:"account_id"`
	JobKind        string         `bun:"job_kind"`
	JobID          int64          `bun:"job_id"`
	EstimateMicros billing.Micros `bun:"estimate_micros"`
	AdmittedAt     time.Time      `bun:"admitted_at,nullzero,notnull,default:current_timestamp"`
	ReleasedAt     *time.Time     `bun:"released_at"`
}

// Admissions admits jobs under the per-account and platform caps and keeps
// the estimated charge of every in-flight job reserved against the balance.
type Admissions struct{ DB *bun.DB }

// Admit inserts j (setting its id) only if the account and the platform are
// under their caps and the balance, less what in-flight jobs have reserved,
// covers estimate. All admissions serialize on the platform setting row, so
// the caps hold under any concurrency. A job under an Idempotency-Key that
// already exists is ErrConflict.
func (a Admissions) Admit(ctx context.Context, j *model.Job, estimate billing.Micros) error {
	return inTx(ctx, a.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		var platformCap int
		err := tx.NewSelect().Table("settings").Column("value").
			Where("name = ?", model.SettingPlatformConcurrentJobs).For("UPDATE").Scan(ctx, &platformCap)
		if err != nil {
			return fmt.Errorf("lock platform cap: %w", err)
		}
		var acc model.Account
		if err := tx.NewSelect().Model(&acc).Where("id = ?", j.AccountID).For("NO KEY UPDATE").Scan(ctx); err != nil {
			return notFound(err)
		}
		limit, err := accountLimit(ctx, tx, acc)
		if err != nil {
			return err
		}
		var open struct {
			Account  int `bun:"account"`
			Platform int `bun:"platform"`
		}
		err = tx.NewSelect().Model((*jobAdmission)(nil)).
			ColumnExpr("count(*) FILTER (WHERE account_id = ?) AS account", j.AccountID).
			ColumnExpr("count(*) AS platform").
			Where("released_at IS NULL").Scan(ctx, &open)
		if err != nil {
			return fmt.Errorf("count in-flight jobs: %w", err)
		}
		reserved, err := reservedMicros(ctx, tx, j.AccountID, 0)
		if err != nil {
			return err
		}
		if open.Account >= limit {
			return &model.TooManyJobsError{InFlight: open.Account, Limit: limit}
		}
		if open.Platform >= platformCap {
			return &model.TooManyJobsError{InFlight: open.Platform, Limit: platformCap, Platform: true}
		}
		if available := acc.BalanceMicros - reserved; available < estimate {
			return &model.InsufficientBalanceError{Required: estimate, Balance: max(available, 0)}
		}
		if err := (Jobs{DB: tx}).Insert(ctx, j); err != nil {
			return err
		}
		_, err = tx.NewInsert().Model(&jobAdmission{
			AccountID: j.AccountID, JobKind: j.Kind, JobID: j.ID, EstimateMicros: estimate,
		}).Exec(ctx)
		if err != nil {
			return fmt.Errorf("insert admission: %w", err)
		}
		return nil
	})
}

// Reserve raises an admitted job's reservation once its real size is known
// (URL jobs learn their duration after the download). It fails with
// InsufficientBalanceError when the balance cannot cover it.
func (a Admissions) Reserve(ctx context.Context, jobKind string, jobID int64, estimate billing.Micros) error {
	return inTx(ctx, a.DB, nil, func(ctx context.Context, tx bun.Tx) error {
		var adm jobAdmission
		if err := tx.NewSelect().Model(&adm).Where("job_kind = ? AND job_id = ?", jobKind, jobID).Scan(ctx); err != nil {
			return notFound(err)
		}
		var acc model.Account
		if err := tx.NewSelect().Model(&acc).Where("id = ?", adm.AccountID).For("NO KEY UPDATE").Scan(ctx); err != nil {
			return notFound(err)
		}
		others, err := reservedMicros(ctx, tx, adm.AccountID, adm.ID)
		if err != nil {
			return err
		}
		if available := acc.BalanceMicros - others; available < estimate {
			return &model.InsufficientBalanceError{Required: estimate, Balance: max(available, 0)}
		}
		_, err = tx.NewUpdate().Model(&adm).Set("estimate_micros = ?", estimate).WherePK().Exec(ctx)
		return err
	})
}

// Release frees a job's slot and reservation; releasing twice is harmless.
func (a Admissions) Release(ctx context.Context, jobKind string, jobID int64) error {
	return release(ctx, a.DB, jobKind, jobID)
}

func release(ctx context.Context, db bun.IDB, jobKind string, jobID int64) error {
	_, err := db.NewUpdate().Model((*jobAdmission)(nil)).
		Set("released_at = now()").
		Where("job_kind = ? AND job_id = ? AND released_at IS NULL", jobKind, jobID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("release admission: %w", err)
	}
	return nil
}

// InFlight counts the account's jobs holding a slot and returns its limit.
func (a Admissions) InFlight(ctx context.Context, accountID string) (inFlight, limit int, err error) {
	acc, err := Accounts{DB: a.DB}.Get(ctx, accountID)
	if err != nil {
		return 0, 0, err
	}
	if limit, err = accountLimit(ctx, a.DB, acc); err != nil {
		return 0, 0, err
	}
	n, err := a.DB.NewSelect().Model((*jobAdmission)(nil)).
		Where("account_id = ? AND released_at IS NULL", accountID).Count(ctx)
	return int(n), limit, err
}

func accountLimit(ctx context.Context, db bun.IDB, acc model.Account) (int, error) {
	if acc.ConcurrentJobsLimit != nil {
		return *acc.ConcurrentJobsLimit, nil
	}
	v, err := Settings{DB: db}.Get(ctx, model.SettingDefaultConcurrentJobs)
	return int(v), err
}

// Settings are platform-wide integer settings.
type Settings struct{ DB bun.IDB }

// Get reads one setting.
func (s Settings) Get(ctx context.Context, name string) (int64, error) {
	var v int64
	err := s.DB.NewSelect().Table("settings").Column("value").Where("name = ?", name).Scan(ctx, &v)
	if err != nil {
		return 0, fmt.Errorf("read setting %s: %w", name, notFound(err))
	}
	return v, nil
}

// Set writes one setting.
func (s Settings) Set(ctx context.Context, name string, value int64) error {
	_, err := s.DB.NewRaw("INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value", name, value).Exec(ctx)
	return err
}

// CountAdmitted counts an account's jobs of each kind admitted since a time.
func (a Admissions) CountAdmitted(ctx context.Context, accountID string, since time.Time) (map[string]int, error) {
	var rows []struct {
		JobKind string `bun:"job_kind"`
		N       int    `bun:"n"`
	}
	err := a.DB.NewSelect().Model((*jobAdmission)(nil)).ColumnExpr("job_kind, count(*) AS n").
		Where("account_id = ? AND admitted_at >= ?", accountID, since).Group("job_kind").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	out := map[string]int{}
	for _, r := range rows {
		out[r.JobKind] = r.N
	}
	return out, nil
}
