/** The banner at the top of the page says when storage cannot be used (503) or is full (507). */
export function showStorageProblem(problem: { status: number; detail: string }): void {
  const banner = document.getElementById('storage-problem')!;
  banner.hidden = false;
  banner.textContent =
    problem.status === 507
      ? `Storage is full: ${problem.detail}. Delete users or allow this site more storage.`
      : `Storage is unavailable: ${problem.detail}. Users cannot be saved in this browser.`;
}

/** True for the answers that mean storage itself failed. */
export const isStorageProblem = (status: number): boolean => status === 503 || status === 507;
