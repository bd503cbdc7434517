/* budget.c - see budget.h. */
#include "budget.h"

#include "errors.h"

int eng_budget_spend(struct eng_budget *b, long n)
{
	long before;

	if (!b)
		return 0;
	before = b->units;
	b->units += n;
	if (b->max_units > 0 && b->units > b->max_units)
		return ENG_EBUDGET;
	if (b->stop && before / ENG_BUDGET_POLL != b->units / ENG_BUDGET_POLL &&
	    b->stop(b->arg))
		return ENG_ECANCELLED;
	return 0;
}
