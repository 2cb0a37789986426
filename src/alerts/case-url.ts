/** `<PUBLIC_BASE_URL>/alerts/<alertId>/case/<caseId>` */
export function caseUrl(publicBaseUrl: string, alertId: number, caseId: number): string {
  return `${publicBaseUrl}/alerts/${alertId}/case/${caseId}`;
}
