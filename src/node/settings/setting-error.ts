/** A problem with the configuration, said in one line that names its source. */
export class SettingError extends Error {
  override name = 'SettingError';
}
