/**
 * The launch dialog: a form built from the server's `launch-options` (image,
 * mode, size, per-container resources, data folders, resource group, name,
 * bootstrap and batch commands, environment, web apps) that shows the session's total and whether an agent has
 * room for it now, and refuses to launch while a value is wrong. A launch
 * profile chosen first fills the fields (./profiles). The room shown at once is
 * the form's own estimate (./room); a moment after the values last changed, and
 * whenever the agents' free resources are read again, the server's dry run of
 * the launch replaces it, with the queue and the user's limits counted.
 */

import { Dialog } from '@jupyterlab/apputils';
import { ReactWidget } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import * as React from 'react';

import {
  ClusterAPIError,
  IAgent,
  IImage,
  ILaunchCheck,
  ILaunchOptions
} from './api';
import { ILaunchValues, LaunchErrors, toRequest, validate } from './form';
import { IServerError, LaunchFormView } from './formview';
import { getTrans } from './i18n';
import { valuesOfProfile } from './profiles';
import { fromCheck, IRoom } from './room';

/** Milliseconds after the last change before the server is asked (typing). */
const CHECK_AFTER = 300;

/** The form inside the launch dialog; `getValue()` gives its values. */
export class LaunchForm extends ReactWidget {
  constructor(options: LaunchForm.IOptions) {
    super();
    this.addClass('jp-ClusterLaunch');
    this._options = options.options;
    this._values = options.values;
    this._agents = options.agents;
    this._images = options.images;
    this._serverError = options.serverError ?? null;
    this._check = options.check ?? null;
    this._askSoon();
  }

  /** The dialog this form is in, told when validity may have changed. */
  dialog: LaunchDialog | null = null;

  get values(): ILaunchValues {
    return this._values;
  }

  get errors(): LaunchErrors {
    return validate(this._values, this._options);
  }

  get isValid(): boolean {
    return Object.keys(this.errors).length === 0;
  }

  getValue(): ILaunchValues {
    return this._values;
  }

  /** Change some values (as typing does). */
  set(patch: Partial<ILaunchValues>): void {
    this._values = { ...this._values, ...patch };
    for (const key of Object.keys(patch)) {
      this._touched.add(key);
      if (this._serverError?.field === key) {
        this._serverError = null;
      }
    }
    this.update();
    this.dialog?.revalidate();
    this._askSoon();
  }

  /** The launch profile chosen ('' for none). */
  get profile(): string {
    return this._profile;
  }

  /**
   * Choose launch profile `name`: its fields fill the form (the others stay);
   * an unknown or disabled one fills nothing.
   */
  chooseProfile(name: string): void {
    const patch = valuesOfProfile(this._options, name, this._values);
    this._profile = patch || !name ? name : '';
    if (patch) {
      this.set(patch);
    } else if (!name) {
      this.set({ carried: {} }); // no profile: nothing of the last one is sent
    } else {
      this.update();
    }
  }

  /** New free resources of the agents. */
  setAgents(agents: IAgent[]): void {
    this._agents = agents;
    this.update();
    this._askSoon();
  }

  /** The server's answer for the values as they are now, if it came. */
  get checked(): IRoom | null {
    const key = this._requestKey();
    return this._checked && this._checked.key === key
      ? this._checked.room
      : null;
  }

  dispose(): void {
    clearTimeout(this._timer);
    this._asking?.abort();
    super.dispose();
  }

  /**
   * The launch request of the values, as a key ('' while they are wrong);
   * whether a kernel starts changes nothing of where the session goes.
   */
  private _requestKey(): string {
    if (!this.isValid) {
      return '';
    }
    const request = toRequest(this._values);
    delete request.start_kernel;
    return JSON.stringify(request);
  }

  /** Ask the server's dry run a moment after the last change. */
  private _askSoon(): void {
    if (!this._check) {
      return;
    }
    clearTimeout(this._timer);
    this._timer = setTimeout(() => void this._ask(), CHECK_AFTER);
  }

  private async _ask(): Promise<void> {
    const key = this._requestKey();
    if (!key || !this._check || this.isDisposed) {
      return;
    }
    this._asking?.abort();
    const asking = (this._asking = new AbortController());
    let room: IRoom;
    try {
      room = fromCheck(await this._check(this._values, asking.signal));
    } catch (error) {
      if (
        !(error instanceof ClusterAPIError) ||
        ![400, 409].includes(error.status)
      ) {
        return; // no answer (aborted, offline): the estimate stays
      }
      room = fromCheck({ refusal: error.message });
    }
    if (asking.signal.aborted || this.isDisposed) {
      return;
    }
    this._checked = { key, room };
    this.update();
  }

  /** Show every field's error, also of fields not touched yet. */
  showAllErrors(): void {
    for (const f of this._options.fields) {
      this._touched.add(f.name);
    }
    this.update();
  }

  protected render(): JSX.Element {
    return (
      <LaunchFormView
        options={this._options}
        values={this._values}
        errors={this.errors}
        touched={this._touched}
        agents={this._agents}
        images={this._images}
        serverError={this._serverError}
        checked={this.checked}
        onChange={patch => this.set(patch)}
        profile={this._profile}
        onProfile={name => this.chooseProfile(name)}
      />
    );
  }

  private _options: ILaunchOptions;
  private _values: ILaunchValues;
  private _agents: IAgent[];
  private _images: IImage[];
  private _serverError: IServerError | null;
  private _touched = new Set<string>();
  private _profile = '';
  private _check: LaunchForm.Check | null;
  private _checked: { key: string; room: IRoom } | null = null;
  private _asking: AbortController | null = null;
  private _timer: ReturnType<typeof setTimeout> | undefined = undefined;
}

export namespace LaunchForm {
  export interface IOptions {
    options: ILaunchOptions;
    values: ILaunchValues;
    agents: IAgent[];
    images: IImage[];
    serverError?: IServerError | null;
    /** The server's dry run of a launch of these values (none: the estimate only). */
    check?: Check;
  }

  /** Ask the server what a launch of `values` would meet now. */
  export type Check = (
    values: ILaunchValues,
    signal: AbortSignal
  ) => Promise<ILaunchCheck>;
}

/** A dialog whose Launch button works only while the form is valid. */
export class LaunchDialog extends Dialog<ILaunchValues> {
  constructor(form: LaunchForm) {
    const trans = getTrans();
    super({
      title: trans.__('Launch a cluster session'),
      body: form,
      buttons: [
        Dialog.cancelButton({ label: trans.__('Cancel') }),
        Dialog.okButton({
          label: trans.__('Launch'),
          ariaLabel: trans.__('Launch the session')
        })
      ],
      focusNodeSelector: 'select',
      hasClose: true
    });
    this.addClass('jp-ClusterLaunchDialog');
    this._form = form;
    form.dialog = this;
  }

  /** Enable the Launch button only while the form is valid. */
  revalidate(): void {
    this._checkValidation();
  }

  resolve(index?: number): void {
    const button = this.node.querySelectorAll<HTMLButtonElement>(
      '.jp-Dialog-footer .jp-Dialog-button'
    )[index ?? 1];
    const accepting =
      index === undefined || button?.classList.contains('jp-mod-accept');
    if (accepting && !this._form.isValid) {
      this._form.showAllErrors();
      return;
    }
    super.resolve(index);
  }

  protected _checkValidation(): void {
    super._checkValidation();
    if (this._form.isValid) {
      return;
    }
    this.node
      .querySelectorAll<HTMLButtonElement>('.jp-Dialog-button.jp-mod-accept')
      .forEach(button => {
        button.disabled = true;
      });
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    this.revalidate();
  }

  private _form: LaunchForm;
}
