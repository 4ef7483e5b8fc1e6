/**
 * The launch dialog's profile choice, without any UI: how each profile of
 * `launch-options` is listed (those the user's limits cannot launch disabled,
 * with the reason) and the form values a chosen profile gives. Used by
 * ./formview (the "Profile" select, the form's first field) and ./dialog.
 */

import { ILaunchOptions, ILaunchProfile, ILaunchRequest } from './api';
import { ILaunchValues, initialValues } from './form';
import { getTrans } from './i18n';

/** One entry of the profile select. */
export interface IProfileChoice {
  /** The profile's name; '' for "no profile". */
  value: string;
  label: string;
  disabled: boolean;
  /** Why it cannot be chosen (shown with it); '' when it can. */
  reason: string;
}

/** The profiles `options` lists (none from a server without them). */
export function profilesOf(options: ILaunchOptions): ILaunchProfile[] {
  return Array.isArray(options.profiles) ? options.profiles : [];
}

/** The entries of the select: "no profile" first, then every profile. */
export function profileChoices(options: ILaunchOptions): IProfileChoice[] {
  const trans = getTrans();
  const none: IProfileChoice = {
    value: '',
    label: trans.__('(none: the fields below)'),
    disabled: false,
    reason: ''
  };
  return [
    none,
    ...profilesOf(options).map(p => {
      const named = p.description ? `${p.name}: ${p.description}` : p.name;
      const reason = p.disabled ? p.reason || trans.__('not allowed') : '';
      return {
        value: p.name,
        label: reason ? trans.__('%1 (unavailable: %2)', named, reason) : named,
        disabled: !!p.disabled,
        reason
      };
    })
  ];
}

/**
 * The form values of profile `name`: its fields set, the others as they are in
 * `current`; null for an unknown or disabled profile (nothing is filled).
 * Fields the form has no control for (a job's `retries`) are `carried`, sent
 * with the launch as they are.
 */
export function valuesOfProfile(
  options: ILaunchOptions,
  name: string,
  current: ILaunchValues
): Partial<ILaunchValues> | null {
  const profile = profilesOf(options).find(p => p.name === name);
  if (!profile || profile.disabled) {
    return null;
  }
  const filled = initialValues(
    { ...options, defaults: { ...profile.fields } },
    {},
    current.start_kernel
  );
  const patch: Partial<ILaunchValues> = {};
  const carried: Partial<ILaunchRequest> = {};
  for (const [key, value] of Object.entries(profile.fields)) {
    if (key in filled) {
      if (key !== 'start_kernel') {
        (patch as any)[key] = filled[key as keyof ILaunchValues];
      }
    } else {
      (carried as any)[key] = value; // a job's retries were dropped
    }
  }
  patch.carried = carried;
  return patch;
}
